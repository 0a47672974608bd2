"""Running tools: async, threads, process isolation, timeouts, tool signals and failures."""

from __future__ import annotations

import asyncio
import datetime
import decimal
import os
import threading
import time
import uuid
from pathlib import Path

import anyio
import pytest
from isolated_tools import isolated_add, isolated_crash, isolated_refusal, spin

import tether._threads as threads
from tether.exceptions import NeedsInput, ToolError, UserError
from tether.execution import Executor, Policy
from tether.tools import Tool, Toolset, tool
from tether.types import (
    ErrorEnvelope,
    ErrorInfo,
    NeedsEnvelope,
    OkEnvelope,
    SandboxPolicy,
    ToolCall,
    ToolSpec,
)

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
async def nap(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "rested"


@tool(side_effects="none")
def blocking_nap(seconds: float) -> str:
    time.sleep(seconds)
    return "rested"


@tool(side_effects="none", sandbox=SandboxPolicy(timeout_ms=100))
async def slow(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "done"


@tool(side_effects="none")
def missing_file(path: str) -> str:
    raise ToolError("NOT_FOUND", f"no such file: {path}", suggestion="List the directory first.")


@tool
def schedule(counterpart: str) -> str:
    raise NeedsInput(duration=True, start_window="Which day suits you?")


@tool(side_effects="none")
def crash() -> str:
    raise ValueError("secret=hunter2 leaked in a message")


@tool(side_effects="none")
def explicit_envelope() -> NeedsEnvelope:
    return NeedsEnvelope(needs={"city": True})


@tool(side_effects="none")
async def own_timeout() -> str:
    await anyio.lowlevel.checkpoint()
    raise TimeoutError("the upstream API timed out")


@tool(side_effects="none")
async def many_waits(times: int) -> int:
    for _ in range(times):
        await anyio.lowlevel.checkpoint()
    return times


@tool(side_effects="none")
async def fails_after_waiting() -> str:
    await anyio.lowlevel.checkpoint()
    raise KeyError("gone")


TOOLS = Toolset(
    own_timeout,
    many_waits,
    fails_after_waiting,
    nap,
    blocking_nap,
    slow,
    spin,
    isolated_add,
    isolated_refusal,
    isolated_crash,
    missing_file,
    schedule,
    crash,
    explicit_envelope,
)


READ_ONLY_TIMEOUT = (
    "Try a smaller or simpler request (narrower scope, less input), or tell the user it is slow."
)


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=name, name=name, arguments=dict(arguments))


async def test_async_tools_are_awaited() -> None:
    assert await Executor(TOOLS).execute(call("nap", seconds=0)) == OkEnvelope(data="rested")


async def test_sync_tools_run_in_a_thread_without_blocking_the_loop() -> None:
    executor = Executor(TOOLS)
    started = time.perf_counter()
    results = await executor.execute_all(
        [ToolCall(id=f"c{i}", name="blocking_nap", arguments={"seconds": 0.2}) for i in range(4)]
    )
    assert results == [OkEnvelope(data="rested")] * 4
    assert time.perf_counter() - started < 0.6


async def test_a_tool_over_its_timeout_gets_timeout() -> None:
    envelope = await Executor(TOOLS).execute(call("slow", seconds=5))
    assert envelope == ErrorEnvelope(
        error=ErrorInfo(
            code="TIMEOUT",
            message="slow did not finish within 0.1 s and was stopped.",
            recoverable=True,
            suggestion=READ_ONLY_TIMEOUT,
            details={"timeout_s": 0.1},
        )
    )


async def test_the_policy_default_timeout_applies_to_tools_without_one() -> None:
    envelope = await Executor(TOOLS, policy=Policy(default_timeout_s=0.05)).execute(call("nap", seconds=5))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "TIMEOUT"


async def test_a_sync_tool_over_its_timeout_gets_timeout_and_its_thread_is_abandoned() -> None:
    started = time.perf_counter()
    executor = Executor(TOOLS, policy=Policy(default_timeout_s=0.05))
    envelope = await executor.execute(call("blocking_nap", seconds=0.5))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "TIMEOUT"
    assert envelope.error.message == (
        "blocking_nap did not finish within 0.05 s and could not be stopped (a thread), so it may still be "
        "running."
    )
    assert time.perf_counter() - started < 0.4


async def test_a_sync_tools_own_timeout_error_is_a_failure_not_a_timeout() -> None:
    @tool(side_effects="none")
    def upstream() -> str:
        raise TimeoutError("the upstream API timed out")

    envelope = await Executor(Toolset(upstream), policy=Policy(default_timeout_s=5)).execute(call("upstream"))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "INTERNAL"
    assert envelope.error.message.startswith("upstream failed: it raised TimeoutError.")


async def test_cancelling_a_run_while_its_sync_tool_runs_cancels_it_and_the_next_call_is_served() -> None:
    started, release = threading.Event(), threading.Event()

    @tool(side_effects="none")
    def wait_for_release() -> str:
        started.set()
        release.wait(5)
        return "released"

    executor = Executor(Toolset(wait_for_release, blocking_nap))
    running = asyncio.create_task(executor.execute(call("wait_for_release")))
    try:
        await asyncio.to_thread(started.wait, 5)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert await executor.execute(call("blocking_nap", seconds=0)) == OkEnvelope(data="rested")
    finally:
        release.set()


async def test_a_mutating_sync_tool_timed_out_while_it_waited_for_a_thread_never_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "LIMIT", 1)
    monkeypatch.setattr(threads, "_POOL", threads._Pool())  # pyright: ignore[reportPrivateUsage] - one thread
    release, writes = threading.Event(), list[str]()

    @tool(side_effects="none")
    def occupy() -> str:
        release.wait(5)
        return "done"

    @tool()
    def write() -> str:
        writes.append("written")
        return "written"

    executor = Executor(Toolset(occupy, write), policy=Policy(default_timeout_s=0.05))
    busy = asyncio.create_task(Executor(Toolset(occupy)).execute(call("occupy")))
    await asyncio.sleep(0.02)
    envelope = await executor.execute(call("write"))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "TIMEOUT"
    release.set()
    assert await busy == OkEnvelope(data="done")
    await asyncio.sleep(0.05)
    assert writes == []


async def test_a_tools_own_timeout_error_is_a_failure_not_a_timeout() -> None:
    envelope = await Executor(TOOLS).execute(call("own_timeout"))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "INTERNAL"
    assert envelope.error.message.startswith("own_timeout failed: it raised TimeoutError.")


@pytest.mark.parametrize("timeout_s", [5, None])
async def test_async_tools_that_wait_run_to_their_result_or_failure_with_or_without_a_timeout(
    timeout_s: float | None,
) -> None:
    executor = Executor(TOOLS, policy=Policy(default_timeout_s=timeout_s))
    assert await executor.execute(call("many_waits", times=0)) == OkEnvelope(data=0)
    assert await executor.execute(call("many_waits", times=25)) == OkEnvelope(data=25)
    failed = await executor.execute(call("fails_after_waiting"))
    assert isinstance(failed, ErrorEnvelope)
    assert failed.error.message.startswith("fails_after_waiting failed: it raised KeyError.")
    trace = executor.journal.entries()[-1].traceback
    assert trace is not None
    assert "KeyError: 'gone'" in trace


async def test_a_stuck_sync_tool_in_process_isolation_is_killed(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    started = time.perf_counter()
    envelope = await Executor(TOOLS).execute(call("spin", marker=str(marker)))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.message == "spin did not finish within 8 s and was stopped."
    assert time.perf_counter() - started < 12
    pid = int(marker.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_isolated_tools_run_in_another_process() -> None:
    envelope = await Executor(TOOLS).execute(call("isolated_add", a=2, b=3))
    assert isinstance(envelope, OkEnvelope)
    assert envelope.data["sum"] == 5
    assert envelope.data["pid"] != os.getpid()


async def test_tool_errors_become_their_envelopes_in_process_and_out() -> None:
    expected = ErrorEnvelope(
        error=ErrorInfo(
            code="NOT_FOUND",
            message="no such file: a.txt",
            recoverable=True,
            suggestion="List the directory first.",
        )
    )
    executor = Executor(TOOLS)
    assert await executor.execute(call("missing_file", path="a.txt")) == expected
    assert await executor.execute(call("isolated_refusal", path="a.txt")) == expected


async def test_needs_input_becomes_a_needs_envelope() -> None:
    envelope = await Executor(TOOLS).execute(call("schedule", counterpart="Aviad"))
    assert envelope == NeedsEnvelope(needs={"duration": True, "start_window": "Which day suits you?"})


async def test_a_tool_may_return_an_envelope_itself() -> None:
    assert await Executor(TOOLS).execute(call("explicit_envelope")) == NeedsEnvelope(needs={"city": True})


@pytest.mark.parametrize("name", ["crash", "isolated_crash"])
async def test_exceptions_become_internal_with_a_safe_message_and_the_traceback_journaled(name: str) -> None:
    executor = Executor(TOOLS)
    envelope = await executor.execute(call(name))
    assert envelope == ErrorEnvelope(
        error=ErrorInfo(
            code="INTERNAL",
            message=f"{name} failed: it raised ValueError. The details are in the audit journal.",
            recoverable=False,
            suggestion="Do not retry this call as it is; try another way, or tell the user the tool failed.",
        )
    )
    result = executor.journal.entries()[-1]
    assert result.kind == "result"
    assert result.traceback is not None
    assert "hunter2" in result.traceback


async def test_cancellation_propagates_to_the_caller() -> None:
    executor = Executor(TOOLS)
    with anyio.move_on_after(0.05) as scope:
        await executor.execute(call("nap", seconds=5))
    assert scope.cancelled_caught
    assert [e.kind for e in executor.journal.entries()] == ["intent"]


@tool(side_effects="none")
def no_access(path: str) -> str:
    raise ToolError("PERMISSION_DENIED", f"{path} is outside the workspace")


async def test_tool_errors_without_a_suggestion_get_the_codes_default() -> None:
    envelope = await Executor(Toolset(no_access)).execute(call("no_access", path="/etc/passwd"))
    assert envelope == ErrorEnvelope(
        error=ErrorInfo(
            code="PERMISSION_DENIED",
            message="/etc/passwd is outside the workspace",
            recoverable=True,
            suggestion="Use a path or resource inside what you are allowed to touch, or ask the user.",
        )
    )


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@tool(side_effects="none")
def odd_values() -> dict[str, object]:
    return {
        "when": datetime.datetime(2026, 11, 23, 9, 30),
        "id": uuid.UUID(int=1),
        "amount": decimal.Decimal("1.50"),
        "tags": {"a"},
        "raw": b"\x00\xff",
        "path": Path("/srv/data"),
        "thing": Opaque(),
    }


@tool(side_effects="none")
def unprintable() -> object:
    return Unprintable()


async def test_a_result_is_json_whatever_python_values_the_tool_returned() -> None:
    executor = Executor(Toolset(odd_values, unprintable))
    envelope = await executor.execute(call("odd_values"))
    assert envelope == OkEnvelope(
        data={
            "when": "2026-11-23T09:30:00",
            "id": "00000000-0000-0000-0000-000000000001",
            "amount": "1.50",
            "tags": ["a"],
            "raw": "AP8=",
            "path": "/srv/data",
            "thing": "Opaque()",
        }
    )
    assert executor.journal.entries()[-1].envelope == envelope.model_dump(mode="json")
    refused = await executor.execute(call("unprintable"))
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.message.startswith("unprintable failed: its result could not be read as JSON")


@tool(side_effects="none")
def exits(code: int) -> str:
    raise SystemExit(code)  # what argparse does on a bad command line


@tool(side_effects="none")
async def exits_async() -> str:
    await anyio.lowlevel.checkpoint()
    raise SystemExit(2)


@tool(side_effects="none")
def interrupts() -> str:
    raise KeyboardInterrupt


@tool(side_effects="none")
async def cancels_itself() -> str:
    await anyio.lowlevel.checkpoint()
    raise asyncio.CancelledError  # e.g. awaiting a future someone else cancelled


@pytest.mark.parametrize(
    ("name", "raised"),
    [
        ("exits", "SystemExit"),
        ("exits_async", "SystemExit"),
        ("interrupts", "KeyboardInterrupt"),
        ("cancels_itself", "CancelledError"),
    ],
)
async def test_a_tool_that_exits_or_interrupts_ends_only_its_call(name: str, raised: str) -> None:
    executor = Executor(Toolset(exits, exits_async, interrupts, cancels_itself))
    envelope = await executor.execute(call(name, code=2) if name == "exits" else call(name))
    assert isinstance(envelope, ErrorEnvelope)
    assert (
        envelope.error.message == f"{name} failed: it raised {raised}. The details are in the audit journal."
    )
    assert [e.kind for e in executor.journal.entries()] == ["intent", "result"]


@tool
def asks_badly() -> str:
    raise NeedsInput(missing=["date"])  # pyright: ignore[reportArgumentType] - the mistake under test


async def test_a_needs_input_that_cannot_make_an_envelope_is_internal_not_a_call_in_doubt() -> None:
    executor = Executor(Toolset(asks_badly))
    envelope = await executor.execute(call("asks_badly"))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.message.startswith("asks_badly failed: its NeedsInput could not be made into an")
    assert await executor.in_doubt() == []


async def test_an_inline_sync_tool_runs_on_the_event_loop_and_a_plain_one_in_a_worker_thread() -> None:
    threads: list[int] = []

    def where() -> str:
        threads.append(threading.get_ident())
        return "here"

    loop_thread = threading.get_ident()
    inline, hopping = tool(name="inline", inline=True)(where), tool(name="hopping")(where)
    executor = Executor(Toolset(inline, hopping))
    assert await executor.execute(call("inline")) == OkEnvelope(data="here")
    assert await executor.execute(call("hopping")) == OkEnvelope(data="here")
    assert threads[0] == loop_thread
    assert threads[1] != loop_thread
    prefixed = inline.with_spec(inline.spec.model_copy(update={"name": "p.inline"}))
    assert prefixed.inline


async def test_an_inline_tool_s_signals_and_failures_become_envelopes_as_any_tool_s() -> None:
    @tool(inline=True)
    def refuse() -> str:
        raise ToolError("NOT_FOUND", "no such thing", recoverable=True)

    @tool(inline=True)
    def crash() -> str:
        raise KeyError("boom")

    executor = Executor(Toolset(refuse, crash))
    refused = await executor.execute(call("refuse"))
    assert isinstance(refused, ErrorEnvelope)
    assert (refused.error.code, refused.error.message) == ("NOT_FOUND", "no such thing")
    crashed = await executor.execute(call("crash"))
    assert isinstance(crashed, ErrorEnvelope)
    assert crashed.error.code == "INTERNAL"
    assert "KeyError" in crashed.error.message


def test_inline_is_refused_where_it_cannot_hold() -> None:
    async def waits() -> None: ...

    def returns() -> None: ...

    with pytest.raises(UserError, match="inline=True is for sync functions"):
        tool(inline=True)(waits)
    with pytest.raises(UserError, match="choose one"):
        tool(inline=True, sandbox=SandboxPolicy(isolation="process"))(returns)
    with pytest.raises(UserError, match="inline=True"):
        Tool(ToolSpec(name="declared"), inline=True)


@tool(side_effects="none", sandbox=SandboxPolicy(timeout_ms=100))
async def slow_start_then_nap() -> str:
    busy_until = time.perf_counter() + 0.15  # its first step, before it ever waits, outlasts the timeout
    while time.perf_counter() < busy_until:
        pass
    await asyncio.sleep(0.08)  # would finish within the timeout, were the first step not counted
    return "done"


@tool(side_effects="none")
async def answers_at_once() -> str:
    return "at once"


async def test_the_timeout_counts_a_tools_first_step_though_its_timer_starts_only_once_it_waits() -> None:
    timed_out = await Executor(Toolset(slow_start_then_nap)).execute(call("slow_start_then_nap"))
    assert isinstance(timed_out, ErrorEnvelope)
    assert timed_out.error.code == "TIMEOUT"
    executor = Executor(Toolset(answers_at_once))
    assert await executor.execute(call("answers_at_once")) == OkEnvelope(data="at once")
    assert executor._deadlines is None  # pyright: ignore[reportPrivateUsage] - no timer: it never waited
