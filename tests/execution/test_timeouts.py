"""An async tool's timeout behaves as `asyncio.timeout_at` around it would, in every corner."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from tether.execution import Executor, Policy
from tether.tools import Toolset, tool
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

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
