"""Worker threads for blocking work: results and errors come back, a hung function never takes the pool's
capacity with it, the limit holds, and idle workers leave."""

import asyncio
import contextvars
import functools
import gc
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

import tether._threads as threads
from tether._threads import run_in_worker

pytestmark = pytest.mark.anyio

REQUEST = contextvars.ContextVar("REQUEST", default="none")


@pytest.fixture(autouse=True)
def fresh_pool(monkeypatch: pytest.MonkeyPatch) -> threads._Pool:  # pyright: ignore[reportPrivateUsage] - the pool under test
    pool = threads._Pool()  # pyright: ignore[reportPrivateUsage] - the pool under test
    monkeypatch.setattr(threads, "_POOL", pool)
    return pool


async def test_a_function_runs_off_the_event_loop_with_the_callers_context() -> None:
    REQUEST.set("r1")
    loop_thread = threading.get_ident()
    ran_on, seen = await run_in_worker(lambda: (threading.get_ident(), REQUEST.get()))
    assert ran_on != loop_thread
    assert seen == "r1"


async def test_what_the_function_raises_is_raised_to_the_caller_even_system_exit() -> None:
    def fail() -> None:
        raise SystemExit(3)

    with pytest.raises(SystemExit):
        await run_in_worker(fail)
    assert await run_in_worker(lambda: "still working") == "still working"


async def test_a_hung_function_abandoned_by_a_timeout_does_not_take_the_only_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "LIMIT", 1)
    release = threading.Event()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await run_in_worker(release.wait)
    try:
        async with asyncio.timeout(5):
            assert await run_in_worker(lambda: 42) == 42
    finally:
        release.set()


async def test_a_job_waiting_for_a_worker_gets_one_when_the_busy_one_is_abandoned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "LIMIT", 1)
    release = threading.Event()
    hung = asyncio.create_task(run_in_worker(release.wait))
    await asyncio.sleep(0.02)
    waiting = asyncio.create_task(run_in_worker(lambda: "served"))
    await asyncio.sleep(0.02)
    assert not waiting.done()  # the limit holds
    hung.cancel()
    try:
        async with asyncio.timeout(5):
            assert await waiting == "served"
    finally:
        release.set()


async def test_no_more_than_the_limit_run_at_once_and_every_job_is_served(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "LIMIT", 2)
    lock = threading.Lock()
    running, most = 0, 0

    def job(n: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.01)
        with lock:
            running -= 1
        return n

    assert await asyncio.gather(*(run_in_worker(lambda n=n: job(n)) for n in range(8))) == list(range(8))
    assert most == 2


async def test_idle_workers_leave(monkeypatch: pytest.MonkeyPatch, fresh_pool: threads._Pool) -> None:  # pyright: ignore[reportPrivateUsage] - the pool under test
    monkeypatch.setattr(threads, "IDLE_S", 0.02)
    await asyncio.gather(*(run_in_worker(nap) for _ in range(3)))
    assert fresh_pool.threads == 3
    await asyncio.to_thread(gone, fresh_pool)
    assert fresh_pool.threads == 0


def nap() -> None:
    time.sleep(0.01)


def gone(pool: threads._Pool) -> None:  # pyright: ignore[reportPrivateUsage] - the pool under test
    """Wait (up to 5 s) until every worker has left."""
    deadline = time.monotonic() + 5
    while pool.threads and time.monotonic() < deadline:
        time.sleep(0.01)


async def test_a_job_abandoned_while_it_waits_for_a_worker_never_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "LIMIT", 1)
    release = threading.Event()
    ran: list[str] = []
    busy = asyncio.create_task(run_in_worker(release.wait))
    await asyncio.sleep(0.02)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.02):
            await run_in_worker(lambda: ran.append("late"))  # e.g. a mutating tool already answered TIMEOUT
    release.set()
    await busy
    assert await run_in_worker(lambda: "next") == "next"
    assert ran == []


async def test_results_arriving_together_wake_the_loop_once_and_each_reaches_its_caller() -> None:
    loop = asyncio.get_running_loop()
    wakes: list[int] = []
    original = loop.call_soon_threadsafe

    def counted(callback: Callable[..., object], *args: object, **kwargs: Any) -> asyncio.Handle:
        wakes.append(1)
        return original(callback, *args, **kwargs)

    loop.call_soon_threadsafe = counted
    try:
        release = threading.Event()

        def job(i: int) -> int:
            release.wait(5)  # all finish at about the same moment
            if i == 7:
                raise ValueError("seven")
            return i * i

        calls = [run_in_worker(lambda i=i: job(i)) for i in range(20)]
        gathered = asyncio.gather(*calls, return_exceptions=True)
        await asyncio.sleep(0.05)  # every job is with a worker, waiting
        release.set()
        time.sleep(0.2)  # noqa: ASYNC251 - the loop busy while they finish: their results wait in its inbox
        results = await gathered
    finally:
        del loop.call_soon_threadsafe
    assert [r for i, r in enumerate(results) if i != 7] == [i * i for i in range(20) if i != 7]
    assert isinstance(results[7], ValueError)
    assert 1 <= len(wakes) < 20  # one wake-up for the results that came together, not one each


def test_a_loop_that_ended_leaves_no_inbox_behind() -> None:
    def one_run() -> int:
        return asyncio.run(run_in_worker(lambda: 5))

    before = len(threads._INBOXES.by_loop)  # pyright: ignore[reportPrivateUsage]
    assert [one_run() for _ in range(3)] == [5, 5, 5]
    gc.collect()
    assert len(threads._INBOXES.by_loop) <= before  # pyright: ignore[reportPrivateUsage]


def test_a_loop_without_weak_references_gets_an_inbox_a_job_and_still_its_results() -> None:
    class Unreferenceable:
        __slots__ = ("calls",)

        def __init__(self) -> None:
            self.calls: list[Callable[[], object]] = []

        def call_soon_threadsafe(self, callback: Callable[[], object]) -> None:
            self.calls.append(callback)

    loop = Unreferenceable()
    inboxes = threads._INBOXES  # pyright: ignore[reportPrivateUsage]
    inbox = inboxes.of(loop)  # pyright: ignore[reportArgumentType]
    assert inbox is not inboxes.of(loop)  # pyright: ignore[reportArgumentType]
    real = asyncio.new_event_loop()
    try:
        future: asyncio.Future[int] = real.create_future()
        inbox.put(future, 5, None)
        inbox.put(future, 6, None)  # a second result before the loop took the first: no second wake-up
        assert len(loop.calls) == 1
        loop.calls[0]()
        assert future.result() == 5
    finally:
        real.close()


async def test_a_blocking_function_never_freezes_the_event_loop() -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        started = time.perf_counter()
        await asyncio.gather(*(run_in_worker(functools.partial(time.sleep, 0.2)) for _ in range(3)))
        elapsed = time.perf_counter() - started
    finally:
        ticker.cancel()
    assert elapsed < 0.5  # the three ran at once
    assert ticks >= 10  # the loop went on meanwhile (40 ticks at most in 0.2 s)


async def test_a_lone_job_that_computes_without_waiting_never_freezes_the_event_loop() -> None:
    await run_in_worker(lambda: None)  # an idle worker: the job below is woken from the call itself
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    def compute() -> int:  # holds the GIL but for the interpreter's switch interval
        end, n = time.perf_counter() + 0.3, 0
        while time.perf_counter() < end:
            n += 1
        return n

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0)  # the ticker waits on its first sleep
    try:
        assert await run_in_worker(compute) > 0
    finally:
        ticker.cancel()
    assert ticks >= 5  # the loop went on meanwhile (~30 ticks at most in 0.3 s)


async def test_the_worker_busy_last_takes_the_next_job_and_no_thread_is_made_for_it(
    fresh_pool: threads._Pool,  # pyright: ignore[reportPrivateUsage] - the pool under test
) -> None:
    first = await run_in_worker(threading.get_ident)
    assert [await run_in_worker(threading.get_ident) for _ in range(20)] == [first] * 20
    assert fresh_pool.threads == 1


async def test_a_cancelled_caller_gets_its_cancellation_and_the_pool_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "LIMIT", 1)
    release, ran = threading.Event(), threading.Event()

    def blocking() -> str:
        ran.set()
        release.wait(5)
        return "late"

    caller = asyncio.create_task(run_in_worker(blocking))
    await asyncio.to_thread(ran.wait, 5)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    try:
        async with asyncio.timeout(5):  # the abandoned thread no longer takes the only place
            assert await run_in_worker(lambda: "served") == "served"
    finally:
        release.set()


async def test_a_worker_that_leaves_closes_its_pipe(
    monkeypatch: pytest.MonkeyPatch,
    fresh_pool: threads._Pool,  # pyright: ignore[reportPrivateUsage] - the pool under test
) -> None:
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    monkeypatch.setattr(threads, "IDLE_S", 0.02)
    await asyncio.gather(*(run_in_worker(nap) for _ in range(3)))
    await asyncio.to_thread(gone, fresh_pool)
    await asyncio.sleep(0.05)  # the last one closes its pipe just after it stops counting
    if before is not None:  # Linux: every descriptor the workers opened is closed again
        assert len(os.listdir("/proc/self/fd")) <= before


def test_a_forked_child_runs_jobs_although_the_parents_workers_are_not_there() -> None:
    async def in_a_thread() -> int:
        return await run_in_worker(lambda: 5)

    assert asyncio.run(in_a_thread()) == 5  # the parent has an idle worker now
    child = multiprocessing.get_context("fork").Process(target=run_one_job_or_fail)
    child.start()
    child.join(10)
    assert child.exitcode == 0


def run_one_job_or_fail() -> None:
    async def one() -> int:
        async with asyncio.timeout(5):
            return await run_in_worker(lambda: 7)

    os._exit(0 if asyncio.run(one()) == 7 else 1)  # a forked child ends without the parent's atexit work


async def test_a_job_given_to_a_worker_its_loop_never_woke_runs_after_idle_s(
    monkeypatch: pytest.MonkeyPatch,
    fresh_pool: threads._Pool,  # pyright: ignore[reportPrivateUsage] - the pool under test
) -> None:
    class Forgetful:
        """A loop that drops the callback meant to wake the worker (e.g. one closed meanwhile)."""

        def call_soon(self, callback: Callable[[], object]) -> None:
            pass

    monkeypatch.setattr(threads, "IDLE_S", 0.2)
    await run_in_worker(lambda: None)  # one worker, idle now
    loop = asyncio.get_running_loop()
    future: asyncio.Future[int] = loop.create_future()
    job = threads._Job(lambda: 7, threads._Inbox(loop), future)  # pyright: ignore[reportPrivateUsage]
    fresh_pool.submit(job, Forgetful())  # pyright: ignore[reportArgumentType]
    assert fresh_pool.idle == []  # given to the idle worker, which nobody wakes
    async with asyncio.timeout(5):
        assert await future == 7


async def drive_until_it_waits(job: Callable[[], object]) -> tuple[Any, Any]:
    """`run_in_worker(job)` stepped by hand, the loop left no step: its result if it returned at once, else
    what it awaits (its future) and the coroutine."""
    coroutine = run_in_worker(job)
    try:
        awaited = coroutine.send(None)
    except StopIteration as done:
        return ("returned", done.value), None
    return awaited, coroutine


async def finish(awaited: Any, coroutine: Any) -> object:
    await asyncio.wait({awaited})  # the future, as the task running the coroutine would wait for it
    with pytest.raises(StopIteration) as done:
        coroutine.send(None)
    return done.value.value


async def test_a_lone_job_wakes_its_worker_before_the_loop_takes_another_step() -> None:
    await run_in_worker(lambda: None)  # an idle worker
    ran = threading.Event()

    def job() -> str:
        ran.set()
        time.sleep(0.05)  # still running when the caller looks: the caller awaits its future
        return "done"

    awaited, coroutine = await drive_until_it_waits(job)
    assert coroutine is not None
    assert ran.wait(5)  # woken by the call itself, not by a callback of the loop's
    assert await finish(awaited, coroutine) == "done"


async def test_a_job_beside_a_waiting_caller_is_woken_after_the_loops_callbacks_with_the_others() -> None:
    release = threading.Event()
    await asyncio.gather(*(run_in_worker(nap) for _ in range(2)))  # two idle workers
    busy = asyncio.create_task(run_in_worker(functools.partial(release.wait, 5)))
    await asyncio.sleep(0.02)  # its caller waits
    # a worker that delivered its result goes idle a moment later: wait for one (else a new thread is started)
    deadline = time.monotonic() + 10
    while not threads._POOL.idle:  # pyright: ignore[reportPrivateUsage]
        assert time.monotonic() < deadline, "no worker went idle"
        await asyncio.sleep(0.001)
    loop = asyncio.get_running_loop()
    order: list[str] = []
    loop.call_soon(order.append, "the loop's callback")
    ran = threading.Event()

    def job() -> str:
        order.append("the job")
        ran.set()
        return "done"

    try:
        awaited, coroutine = await drive_until_it_waits(job)
        assert coroutine is not None
        assert not ran.wait(0.1)  # not woken until the loop runs its callbacks (`_Inbox.wake_all`)
        assert await finish(awaited, coroutine) == "done"
        assert order == ["the loop's callback", "the job"]
    finally:
        release.set()
        await busy


async def test_results_put_while_the_loop_wakes_a_worker_each_reach_their_caller() -> None:
    def square(i: int) -> int:
        if i % 50 == 49:
            raise ValueError(i)
        return i * i

    async def one(i: int) -> object:
        try:
            return await run_in_worker(functools.partial(square, i))
        except ValueError as e:
            return e.args[0]

    alone = [await one(i) for i in range(300)]  # one caller at a time: each wakes its worker at once
    release = threading.Event()
    busy = asyncio.create_task(run_in_worker(functools.partial(release.wait, 5)))
    await asyncio.sleep(0.01)
    beside = [await one(i) for i in range(300)]  # beside a waiting caller: woken with the loop's others
    release.set()
    assert await busy
    expected = [i if i % 50 == 49 else i * i for i in range(300)]
    assert alone == expected
    assert beside == expected


def test_the_inbox_found_last_is_its_own_loops() -> None:
    inboxes = threads._Inboxes()  # pyright: ignore[reportPrivateUsage]
    first, second = asyncio.new_event_loop(), asyncio.new_event_loop()
    try:
        a, b = inboxes.of(first), inboxes.of(second)
        assert a is not b
        assert [inboxes.of(first), inboxes.of(second), inboxes.of(second), inboxes.of(first)] == [a, b, b, a]
    finally:
        first.close()
        second.close()
    del first, a
    gc.collect()
    third = asyncio.new_event_loop()
    try:
        assert inboxes.of(third) is not b
        assert len(inboxes.by_loop) == 2  # the dead loop's inbox is gone; its loop is not kept by the last
    finally:
        third.close()
