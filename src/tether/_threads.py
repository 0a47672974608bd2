"""Blocking work off the event loop, cheaply: persistent worker threads and a direct handoff.

A sync tool must not run on the event loop (one that blocks would stall every run in the process), so it runs
in a worker thread. `anyio.to_thread.run_sync` does that through a capacity limiter, a per-loop worker
registry and a cancel scope; its handoff cost ~160 µs a call on the 2-vCPU VM the benchmarks run on, more
than the rest of a tool turn. Here a job is a queue put, one worker wakes, and its result comes back through
the loop's inbox (~90 µs, most of it the two cross-thread wake-ups, which no hop avoids). The inbox wakes the
loop (`call_soon_threadsafe`: a write to its self-pipe) only when it holds no result yet: results that come
while the loop has not taken the earlier ones go with them, so a batch of calls costs about one wake-up
instead of one a call (~20% less CPU a call in a batch of 50).

Workers are made on demand up to `LIMIT` at once and leave after `IDLE_S` without work. A caller that stops
waiting (a timeout, a cancelled run) abandons its job: a job still queued never runs (a mutating tool
answered `TIMEOUT` must not take effect later); a running one cannot be stopped (Python has no way to), so
its thread stops counting against `LIMIT` and leaves once the function returns: a hung function never takes
the pool's capacity with it.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["IDLE_S", "LIMIT", "run_in_worker"]

T = TypeVar("T")

LIMIT = 64
"""Worker threads busy at once, as many as the executor's default `Policy.max_concurrency` runs calls at once
(anyio's default is 40): more jobs wait for one to be free."""
IDLE_S = 10.0
"""Seconds a worker waits for work before it leaves."""


class _Inbox:
    """Results for one event loop, taken all at once by the loop: one wake-up for however many arrive before
    it runs. It holds its loop weakly (inboxes are kept per loop, for as long as the loop lives)."""

    __slots__ = ("lock", "loop", "pending", "results")

    def __init__(self, loop: asyncio.AbstractEventLoop, *, weak: bool = True) -> None:
        self.loop: Callable[[], asyncio.AbstractEventLoop | None] = (
            weakref.ref(loop) if weak else lambda: loop
        )
        self.lock = threading.Lock()
        self.results: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        self.pending = False
        """A `take` is on its way to the loop: results put meanwhile go with it."""

    def put(self, future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
        """From a worker thread: `future` gets `result` (or `error`) on its loop."""
        with self.lock:
            self.results.append((future, result, error))
            if self.pending:
                return
            self.pending = True
        loop = self.loop()
        try:
            if loop is None:
                raise RuntimeError("the event loop is gone")
            loop.call_soon_threadsafe(self.take)
        except RuntimeError:  # a closed event loop: nobody waits for these results
            with self.lock:
                self.results.clear()
                self.pending = False

    def take(self) -> None:
        """On the loop: deliver every result put so far."""
        with self.lock:
            results, self.results = self.results, []
            self.pending = False
        for future, result, error in results:
            _deliver(future, result, error)


class _Inboxes:
    """Each event loop's inbox, for as long as the loop lives."""

    def __init__(self) -> None:
        self.by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Inbox] = (
            weakref.WeakKeyDictionary()
        )
        self.lock = threading.Lock()

    def of(self, loop: asyncio.AbstractEventLoop) -> _Inbox:
        """The inbox of `loop` (called on the loop's thread)."""
        try:
            found = self.by_loop.get(loop)
        except TypeError:
            # a loop without weak references: an inbox a job (a wake-up each, as without inboxes)
            return _Inbox(loop, weak=False)
        if found is None:
            with self.lock:
                found = self.by_loop.get(loop)
                if found is None:
                    found = self.by_loop[loop] = _Inbox(loop)
        return found

    def forget(self) -> None:
        """In a forked child: no lock a thread of the parent held, no inbox of the parent's loops."""
        self.by_loop = weakref.WeakKeyDictionary()
        self.lock = threading.Lock()


_INBOXES = _Inboxes()
os.register_at_fork(after_in_child=_INBOXES.forget)


class _Job:
    __slots__ = ("abandoned", "context", "finished", "function", "future", "inbox", "started")

    def __init__(self, function: Callable[[], Any], inbox: _Inbox, future: asyncio.Future[Any]):
        self.function = function
        self.inbox = inbox
        self.future = future
        self.context = contextvars.copy_context()  # the tool sees the caller's context variables
        self.started = False
        self.finished = False
        self.abandoned = False


class _Pool:
    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.threads = 0
        """Workers counting against `LIMIT`: idle, or busy with a job someone still waits for."""
        self.idle = 0
        """Workers waiting for work less the jobs waiting for a worker (below 0: jobs wait at `LIMIT`)."""

    def submit(self, job: _Job) -> None:
        with self.lock:
            if self.idle > 0 or self.threads >= LIMIT:
                self.idle -= 1
            else:
                self.start()
        self.jobs.put(job)

    def start(self) -> None:
        """One more worker (the lock held); it takes the job its caller is about to queue."""
        self.threads += 1
        threading.Thread(target=self.work, name="tether-worker", daemon=True).start()

    def abandon(self, job: _Job) -> None:
        with self.lock:
            if job.finished:
                return
            job.abandoned = True
            if not job.started:  # still queued: it will never run, and holds no thread
                return
            self.threads -= 1  # its thread no longer counts against the limit
            if self.idle < 0:  # a job waits for a worker: one starts in the abandoned one's place
                self.idle += 1
                self.start()

    def work(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=IDLE_S)
            except queue.Empty:
                with self.lock:
                    if self.idle > 0:  # no job is on its way to this worker: leave
                        self.idle -= 1
                        self.threads -= 1
                        return
                continue
            with self.lock:
                if job.abandoned:  # its caller stopped waiting before it started: it must not run
                    self.idle += 1
                    continue
                job.started = True
            try:
                result, error = job.context.run(job.function), None
            except BaseException as e:  # a tool's sys.exit() or ^C ends its call only, as anything else
                result, error = None, e
            with self.lock:
                job.finished = True
                if not job.abandoned:
                    self.idle += 1
            job.inbox.put(job.future, result, error)
            if job.abandoned:
                return
            del job, result, error  # not kept alive while the worker waits


def _deliver(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # abandoned meanwhile
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


_POOL = _Pool()


async def run_in_worker(function: Callable[[], T]) -> T:
    """`function()` in a worker thread; cancelling the caller abandons the thread (see the module)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    job = _Job(function, _INBOXES.of(loop), future)
    _POOL.submit(job)
    try:
        return await future
    except asyncio.CancelledError:
        _POOL.abandon(job)
        raise
