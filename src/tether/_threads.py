"""Blocking work off the event loop, cheaply: persistent worker threads and a direct handoff.

A sync tool must not run on the event loop (one that blocks would stall every run in the process), so it runs
in a worker thread. `anyio.to_thread.run_sync` does that through a capacity limiter, a per-loop worker
registry and a cancel scope, `loop.run_in_executor` through two futures and a queue; on the 2-vCPU VM the
benchmarks run on a hop costs them ~57 and ~43 µs (bench/bench_hop.py). Here a job is handed to an idle worker
directly and wakes it with a byte on its pipe (~10 µs a hop). Most of a hop is its two cross-thread
wake-ups, which no hop avoids; a pipe makes them cheap (see `_Pool`).

A job no other caller of the loop waits beside (the usual sync tool: one call at a time) wakes its worker at
once, and the worker, woken on the loop's vCPU, usually runs it before the loop's `os.write` returns: the
caller then has its result without awaiting it (`_Inbox.wake_now`). Otherwise its result comes back through
the loop's inbox, which wakes the loop (`call_soon_threadsafe`: a write to its self-pipe) only when it holds
no result yet: results that come while the loop has not taken the earlier ones go with them, so a batch of
calls costs about one wake-up instead of one a call (~20% less CPU a call in a batch of 50).

Workers are made on demand up to `LIMIT` at once and leave after `IDLE_S` without work. A caller that stops
waiting (a timeout, a cancelled run) abandons its job: a job still queued never runs (a mutating tool
answered `TIMEOUT` must not take effect later); a running one cannot be stopped (Python has no way to), so
its thread stops counting against `LIMIT` and leaves once the function returns: a hung function never takes
the pool's capacity with it.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import select
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["IDLE_S", "LIMIT", "Expired", "run_in_worker"]

T = TypeVar("T")

LIMIT = 64
"""Worker threads busy at once, as many as the executor's default `Policy.max_concurrency` runs calls at once
(anyio's default is 40): more jobs wait for one to be free."""
IDLE_S = 10.0
"""Seconds a worker waits for work before it leaves."""


class _Inbox:
    """Results for one event loop, taken all at once by the loop: one wake-up for however many arrive before
    it runs. It holds its loop weakly (inboxes are kept per loop, for as long as the loop lives)."""

    __slots__ = ("lock", "loop", "pending", "results", "to_wake", "waiting")

    def __init__(self, loop: asyncio.AbstractEventLoop, *, weak: bool = True) -> None:
        self.loop: Callable[[], asyncio.AbstractEventLoop | None] = (
            weakref.ref(loop) if weak else lambda: loop
        )
        self.lock = threading.Lock()
        self.results: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        self.pending = False
        """A `take` is on its way to the loop: results put meanwhile go with it."""
        self.to_wake: list[_Worker] = []
        """Workers given a job by this loop since it last woke them (on the loop's thread only)."""
        self.waiting = 0
        """Callers on this loop waiting for a worker's result (on the loop's thread only)."""

    def wake(self, worker: _Worker, loop: asyncio.AbstractEventLoop) -> None:
        """On the loop: `worker` has a job; wake it, with any others given one, once the loop's current
        callbacks have run (`wake_all`)."""
        self.to_wake.append(worker)
        if len(self.to_wake) == 1:
            loop.call_soon(self.wake_all)

    def wake_now(self, worker: _Worker) -> None:
        """On the loop, for a job no other caller of the loop waits beside: wake `worker` at once and take
        whatever was put meanwhile. When the scheduler runs the worker on the loop's vCPU (a pipe's reader
        is woken as a "sync" wake-up, on the writer's vCPU, and preempts it), a short job is done before
        `os.write` returns: its caller has its result without awaiting it (no task switch, no wake-up of
        the loop through its self-pipe, no loop iteration)."""
        with self.lock:
            self.pending = True  # what is put during the write is taken just below: no wake-up of the loop
        os.write(worker.wake_w, b"\0")
        self.take()

    def wake_all(self) -> None:
        """On the loop: a byte on each waiting worker's pipe. Written together, after the loop's other
        callbacks: `os.write` lets go of the GIL, and a worker woken while the loop still has Python to run
        (the other calls of a batch) takes it from the loop, once a call (50 calls at once cost ~40% more
        CPU woken one by one)."""
        workers, self.to_wake = self.to_wake, []
        for worker in workers:
            os.write(worker.wake_w, b"\0")

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
        self.last: _Inbox | None = None
        """The inbox found last: most processes run one loop, and checking it (its weak reference called)
        costs a tenth of the dictionary's lookup (a weak reference made and hashed, ~0.5 µs)."""

    def of(self, loop: asyncio.AbstractEventLoop) -> _Inbox:
        """The inbox of `loop` (called on the loop's thread)."""
        last = self.last  # read once: another loop's thread may replace it meanwhile
        if last is not None and last.loop() is loop:
            return last
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
        self.last = found
        return found

    def forget(self) -> None:
        """In a forked child: no lock a thread of the parent held, no inbox of the parent's loops."""
        self.by_loop = weakref.WeakKeyDictionary()
        self.lock = threading.Lock()
        self.last = None


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


_LEAVE = _Job(lambda: None, cast("_Inbox", None), cast("asyncio.Future[Any]", None))
"""What a worker does after a job abandoned while it ran: leave (its thread no longer counts)."""


class _Worker:
    """A worker thread's handoff: the job it is given, and the pipe it sleeps on until a byte says so."""

    __slots__ = ("job", "wake_r", "wake_w")

    def __init__(self, job: _Job) -> None:
        self.job: _Job | None = job
        self.wake_r, self.wake_w = os.pipe()

    def close(self) -> None:
        os.close(self.wake_r)
        os.close(self.wake_w)


class _Pool:
    """Workers made on demand up to `LIMIT`; an idle one sleeps on a pipe of its own.

    A job goes to the idle worker that was busy last, woken by a byte on its pipe: at once when no other
    caller of the loop waits (`_Inbox.wake_now`), else once the loop's current callbacks have run, with the
    others (`_Inbox.wake_all`). A pipe rather than a lock (what `queue` waits on): Linux wakes a pipe's
    reader as a "sync" wake-up, on the writer's vCPU, where it preempts the writer; a lock's (a futex's)
    wake-up has no such hint and often goes to the other vCPU, which has halted and must be interrupted. So
    a hop is two context switches on one vCPU (on the benchmarks' VM ~10 µs a hop, against ~25-35 for
    interrupts to a halted vCPU, bench/bench_hop.py). The scheduler stays free to move a worker that keeps
    its CPU busy (nothing is pinned)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[_Worker] = []
        """Workers waiting for a job, the one busy last at the end."""
        self.waiting: collections.deque[_Job] = collections.deque()
        """Jobs waiting for a worker (`LIMIT` busy)."""
        self.threads = 0
        """Workers counting against `LIMIT`: idle, or busy with a job someone still waits for."""

    def submit(self, job: _Job, loop: asyncio.AbstractEventLoop, *, alone: bool = False) -> None:
        """`job` to an idle worker (woken through the inbox of `loop`, the running one: at once if `alone`),
        a new one, or the queue of jobs waiting for one."""
        with self.lock:
            if self.idle:
                worker = self.idle.pop()
                worker.job = job
            elif self.threads < LIMIT:
                self.threads += 1
                worker = None
            else:
                self.waiting.append(job)
                return
        if worker is None:
            self.start(job)
        elif alone:
            job.inbox.wake_now(worker)
        else:
            job.inbox.wake(worker, loop)

    def start(self, job: _Job) -> None:
        """A new worker for `job` (counted already)."""
        threading.Thread(target=self.work, args=(_Worker(job),), name="tether-worker", daemon=True).start()

    def abandon(self, job: _Job) -> None:
        with self.lock:
            if job.finished:
                return
            job.abandoned = True
            if not job.started:  # still waiting, or on its way to a worker: it will never run
                return
            self.threads -= 1  # its thread no longer counts against the limit
            successor = self.next_job()  # a job waiting for a worker: one starts in the abandoned one's place
            if successor is None:
                return
            self.threads += 1
        self.start(successor)

    def next_job(self) -> _Job | None:
        """The first job still waiting for a worker (the lock held)."""
        while self.waiting:
            job = self.waiting.popleft()
            if not job.abandoned:
                return job
        return None

    def work(self, worker: _Worker) -> None:
        job, worker.job = worker.job, None
        poller = select.poll()
        poller.register(worker.wake_r, select.POLLIN)
        try:
            while job is not None:
                job = self.run(job, worker)
                if job is _LEAVE:  # its caller stopped waiting while it ran: the thread no longer counts
                    return
                while job is None:  # idle: wait for a job handed over, or leave after IDLE_S without one
                    if poller.poll(IDLE_S * 1000):
                        os.read(worker.wake_r, 1)
                        job, worker.job = worker.job, None
                        continue
                    with self.lock:
                        if worker in self.idle:  # no job is on its way to this worker: leave
                            self.idle.remove(worker)
                            self.threads -= 1
                            return
                        job, worker.job = worker.job, None  # given one, and its loop never woke it
        finally:
            worker.close()

    def run(self, job: _Job, worker: _Worker) -> _Job | None:
        """Run `job` (unless it was abandoned before it started); then the worker's next job: one waiting,
        else None with the worker idle, or `_LEAVE` if `job` was abandoned while it ran."""
        with self.lock:
            if job.abandoned:  # its caller stopped waiting before it started: it must not run
                return self.next_job_or_idle(worker)
            job.started = True
        try:
            result, error = job.context.run(job.function), None
        except BaseException as e:  # a tool's sys.exit() or ^C ends its call only, as anything else
            result, error = None, e
        with self.lock:
            job.finished = True
            following = _LEAVE if job.abandoned else self.next_job_or_idle(worker)
        job.inbox.put(job.future, result, error)  # after the worker is idle: the caller's next job finds it
        return following

    def next_job_or_idle(self, worker: _Worker) -> _Job | None:
        """The first job still waiting for a worker, else None with `worker` idle (the lock held)."""
        job = self.next_job()
        if job is None:
            self.idle.append(worker)
        return job

    def forget(self) -> None:
        """In a forked child: none of the parent's workers exist here (their pipes close), no lock is held."""
        for worker in self.idle:
            worker.close()
        self.__init__()


def _deliver(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # abandoned meanwhile
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


_POOL = _Pool()
os.register_at_fork(after_in_child=lambda: _POOL.forget())  # the pool of the moment (tests replace it)


class Expired(TimeoutError):
    """`run_in_worker`'s deadline passed before the function returned (a `TimeoutError` the function raised
    itself is not this)."""


async def run_in_worker(function: Callable[[], T], *, deadline: float | None = None) -> T:
    """`function()` in a worker thread; cancelling the caller abandons the thread (see the module), and so
    does `deadline` (the running loop's clock) when it passes first, which raises `Expired`.

    The deadline is a timer of the loop's (`call_at`) that abandons the job and fails its future: no
    `asyncio.timeout_at` around the await, whose context manager, task cancellation and `uncancel` cost
    ~3 µs a call more."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    inbox = _INBOXES.of(loop)
    job = _Job(function, inbox, future)
    _POOL.submit(job, loop, alone=not inbox.waiting)
    if future.done():  # done while its worker was woken (`_Inbox.wake_now`)
        return future.result()
    timer = None if deadline is None else loop.call_at(deadline, _expire, job)
    inbox.waiting += 1
    try:
        return await future
    except asyncio.CancelledError:
        _POOL.abandon(job)
        raise
    finally:
        inbox.waiting -= 1
        if timer is not None:
            timer.cancel()


def _expire(job: _Job) -> None:
    """On the loop, at a job's deadline: its caller stops waiting."""
    if not job.future.done():
        _POOL.abandon(job)
        job.future.set_exception(Expired())
