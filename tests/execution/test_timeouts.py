"""An async tool's timeout behaves as `asyncio.timeout_at` around it would, in every corner."""

from __future__ import annotations

import asyncio
import time

import anyio
import anyio.to_thread
import pytest

from tether.execution import Executor, Policy
from tether.execution._invoke import Deadlines, _Expiry  # pyright: ignore[reportPrivateUsage]
from tether.tools import Toolset, tool
from tether.types import ErrorEnvelope, OkEnvelope, SandboxPolicy, ToolCall

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
async def stubborn() -> str:
    """Swallows the timeout's cancellation and answers anyway."""
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError:
        return "finished anyway"
    return "slept"


@tool(side_effects="none")
async def converts() -> str:
    """Turns the timeout's cancellation into a TimeoutError of its own."""
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError:
        raise TimeoutError("gave up") from None
    return "slept"


@tool(side_effects="none")
async def slow() -> str:
    await asyncio.sleep(5)
    return "slept"


@tool(side_effects="none")
async def quick() -> str:
    await asyncio.sleep(0)
    return "done"


TOOLS = Toolset(stubborn, converts, slow, quick)
POLICY = Policy(default_timeout_s=0.02)


def call(name: str) -> ToolCall:
    return ToolCall(id=name, name=name)


def code(envelope: object) -> str:
    return envelope.error.code if isinstance(envelope, ErrorEnvelope) else "ok"


async def test_a_tool_that_swallows_its_timeout_keeps_its_answer_and_leaves_the_task_uncancelled() -> None:
    executor = Executor(TOOLS, policy=POLICY)
    assert await executor.execute(call("stubborn")) == OkEnvelope(data="finished anyway")
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0  # the timeout's cancellation was taken back
    await asyncio.sleep(0.03)  # and nothing cancels this task later
    assert await executor.execute(call("quick")) == OkEnvelope(data="done")


async def test_a_timeout_error_raised_after_the_timeout_counts_as_the_timeout() -> None:
    envelope = await Executor(TOOLS, policy=POLICY).execute(call("converts"))
    assert code(envelope) == "TIMEOUT"


async def test_timeouts_one_after_another_leave_the_task_as_it_was() -> None:
    executor = Executor(TOOLS, policy=POLICY)
    for _ in range(3):
        assert code(await executor.execute(call("slow"))) == "TIMEOUT"
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0
    await asyncio.sleep(0.03)
    assert await executor.execute(call("quick")) == OkEnvelope(data="done")


async def test_a_cancellation_from_outside_during_a_timeout_goes_on_to_the_caller() -> None:
    cleaning = asyncio.Event()

    @tool(side_effects="none")
    async def slow_cleanup() -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:  # the timeout's
            cleaning.set()
            await asyncio.sleep(5)  # cleaning up, when the run itself is cancelled
            raise
        return "slept"

    executor = Executor(Toolset(slow_cleanup), policy=POLICY)
    task = asyncio.ensure_future(executor.execute(call("slow_cleanup")))
    await cleaning.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def test_an_outer_cancel_scope_still_cancels_a_tool_with_a_timeout() -> None:
    executor = Executor(TOOLS, policy=Policy(default_timeout_s=1))
    with anyio.move_on_after(0.02) as scope:
        await executor.execute(call("slow"))
    assert scope.cancelled_caught
    assert [e.kind for e in executor.journal.entries()] == ["intent"]


async def test_the_timer_of_a_tool_that_finished_in_time_is_gone() -> None:
    executor = Executor(TOOLS, policy=Policy(default_timeout_s=0.02))
    assert await executor.execute(call("quick")) == OkEnvelope(data="done")
    await asyncio.sleep(0.04)  # a timer left armed would cancel this task now
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0


@tool(side_effects="none")
async def nap(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "rested"


@tool(side_effects="none", sandbox=SandboxPolicy(timeout_ms=30))
async def brief_nap(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "rested"


def deadlines_of(executor: Executor) -> Deadlines:
    found = executor._deadlines  # pyright: ignore[reportPrivateUsage]
    assert found is not None
    return found


async def test_concurrent_calls_sharing_one_timer_each_end_at_their_own_deadline() -> None:
    executor = Executor(Toolset(nap), policy=Policy(default_timeout_s=0.1))
    calls = [ToolCall(id=f"c{i}", name="nap", arguments={"seconds": 0.01 if i % 2 else 5}) for i in range(20)]
    started = time.perf_counter()
    results = await executor.execute_all(calls)
    elapsed = time.perf_counter() - started
    assert [code(r) for r in results] == ["TIMEOUT", "ok"] * 10
    assert 0.1 <= elapsed < 0.6
    deadlines = deadlines_of(executor)
    assert (len(deadlines.queue), deadlines.live, deadlines.handle) == (0, 0, None)  # nothing left armed


async def test_a_shorter_timeout_after_a_longer_one_still_ends_on_time() -> None:
    executor = Executor(Toolset(nap, brief_nap), policy=Policy(default_timeout_s=5))
    started = time.perf_counter()
    long_one = asyncio.ensure_future(
        executor.execute(ToolCall(id="a", name="nap", arguments={"seconds": 0.3}))
    )
    await asyncio.sleep(0.01)
    short = await executor.execute(ToolCall(id="b", name="brief_nap", arguments={"seconds": 5}))
    assert code(short) == "TIMEOUT"
    assert time.perf_counter() - started < 0.25  # its own 30 ms, not the queued 5 s
    assert await long_one == OkEnvelope(data="rested")
    deadlines = deadlines_of(executor)
    assert (len(deadlines.queue), deadlines.handle) == (0, None)


async def test_deadlines_forget_ended_calls_without_growing() -> None:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    deadlines = Deadlines(loop)
    first = _Expiry(task, loop.time() + 60)
    deadlines.watch(first)
    rest = [_Expiry(task, loop.time() + 60) for _ in range(200)]
    for expiry in rest:
        deadlines.watch(expiry)
    for expiry in rest:  # all end while the first still runs
        deadlines.forget(expiry)
    assert deadlines.live == 1
    assert len(deadlines.queue) <= 65  # compacted as most of it ended
    deadlines.forget(first)
    assert (len(deadlines.queue), deadlines.live, deadlines.handle) == (0, 0, None)
    assert not first.fired


async def test_an_executor_used_on_another_loop_gets_timeouts_there_too() -> None:
    executor = Executor(TOOLS, policy=POLICY)
    assert code(await executor.execute(call("slow"))) == "TIMEOUT"

    def elsewhere() -> str:
        return asyncio.run(_timed_out(executor))

    assert await anyio.to_thread.run_sync(elsewhere) == "TIMEOUT"
    assert code(await executor.execute(call("slow"))) == "TIMEOUT"


async def _timed_out(executor: Executor) -> str:
    return code(await executor.execute(call("slow")))
