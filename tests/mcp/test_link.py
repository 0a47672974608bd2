"""MCPToolset opened with `async with`: the connection on the caller's event loop, kept as the thread keeps it.

The same server (written with the SDK, a real subprocess) as test_client.py, which covers the thread path:
calls, stderr capture, a crash, a hang, a changed tool list, a server that cannot start, and the process
stopped at the block's end.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from tether.exceptions import UserError
from tether.execution import Executor, Policy
from tether.mcp import MCPToolset
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).with_name("sdk_server.py")
Alive = Callable[[int], bool]


def mount(*args: str, ping_timeout_s: float = 5) -> MCPToolset:
    return MCPToolset.stdio(
        [sys.executable, str(SERVER), *args], max_backoff_s=1, ping_timeout_s=ping_timeout_s
    )


async def call(executor: Executor, name: str, **arguments: object) -> OkEnvelope | ErrorEnvelope:
    envelope = await executor.execute(ToolCall(id="c1", name=name, arguments=dict(arguments)))
    assert not isinstance(envelope, dict)
    return envelope  # pyright: ignore[reportReturnType] - no tool here asks for input


async def until_ok(executor: Executor, name: str, **arguments: object) -> OkEnvelope | ErrorEnvelope:
    for _ in range(200):  # a minute at most
        envelope = await call(executor, name, **arguments)
        if envelope.ok:
            return envelope
        await anyio.sleep(0.3)
    return await call(executor, name, **arguments)


async def eventually(check: Callable[[], bool]) -> bool:
    for _ in range(200):  # ten seconds at most
        if check():
            return True
        await anyio.sleep(0.05)
    return check()


async def test_calls_run_on_the_callers_loop_with_no_thread_of_its_own(tmp_path: Path, alive: Alive) -> None:
    pids = tmp_path / "pids"
    before = {t.name for t in threading.enumerate()}
    async with mount("stdio", str(pids)) as toolset:
        assert toolset.tools()["add"].spec.side_effects == "none"  # listed when the block starts
        assert await call(Executor(toolset), "add", a=2, b=3) == OkEnvelope(data={"total": 5})
        assert not any(t.name.startswith("tether-mcp") for t in threading.enumerate() if t.name not in before)
        pid = int(pids.read_text().split()[0])
        assert alive(pid)
    assert not alive(pid)  # the block's end stopped the server
    closed = await call(Executor(toolset), "add", a=1, b=1)
    assert isinstance(closed, ErrorEnvelope)
    assert closed.error.code == "CONNECTION_INACTIVE"
    assert not closed.error.recoverable


async def test_the_servers_stderr_is_captured_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    async with mount() as toolset:
        assert await call(Executor(toolset), "echo", text="hello") == OkEnvelope(data={"result": "hello"})
        assert await eventually(lambda: "echo was called with 'hello'" in toolset.stderr_tail())
    assert "echo was called" not in capfd.readouterr().err


async def test_a_crashed_server_answers_connection_inactive_and_is_restarted(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    async with mount("stdio", str(pids)) as toolset:
        executor = Executor(toolset)
        crashed = await call(executor, "crash")
        assert isinstance(crashed, ErrorEnvelope)
        assert crashed.error.code == "CONNECTION_INACTIVE"
        assert crashed.error.recoverable
        assert "call again" in (crashed.error.suggestion or "")
        assert await until_ok(executor, "add", a=1, b=2) == OkEnvelope(data={"total": 3})
    assert len(pids.read_text().split()) == 2  # a second process: restarted, not merely waited for


async def test_a_hung_server_times_out_then_is_found_hung_and_restarted() -> None:
    async with mount(ping_timeout_s=1) as toolset:
        executor = Executor(toolset, policy=Policy(default_timeout_s=1))
        hung = await call(executor, "hang", seconds=120)
        assert isinstance(hung, ErrorEnvelope)
        assert hung.error.code == "TIMEOUT"
        await anyio.sleep(1.5)  # the listing asked for after the timeout goes unanswered
        during = await call(executor, "add", a=1, b=2)
        assert isinstance(during, ErrorEnvelope)
        assert during.error.code == "CONNECTION_INACTIVE"
        assert "(hung)" in during.error.message
        assert await until_ok(executor, "add", a=1, b=2) == OkEnvelope(data={"total": 3})


async def test_a_changed_tool_list_refreshes_the_toolset() -> None:
    async with mount() as toolset:
        before = toolset.tools()
        assert "fresh" not in before
        assert (await call(Executor(toolset), "grow")).ok
        assert await eventually(lambda: "fresh" in toolset.tools())
        assert toolset.tools() is not before


async def test_a_server_that_cannot_start_fails_the_block_naming_it_with_its_stderr() -> None:
    toolset = MCPToolset.stdio([sys.executable, "-c", "import sys; sys.exit('no config file found')"])
    with pytest.raises(UserError, match=r"did not start: .*its stderr ends: no config file found"):
        async with toolset:
            pytest.fail("the block must not run")
    assert toolset.closed


async def test_a_toolset_already_started_in_a_thread_cannot_be_opened_on_a_loop() -> None:
    with mount() as toolset:
        await toolset.connect()  # the thread path, started by the first use
        with pytest.raises(UserError, match="open a toolset with `async with` before"):
            async with toolset:
                pytest.fail("the block must not run")


async def test_a_call_from_another_event_loop_is_refused_as_an_envelope() -> None:
    async with mount() as toolset:
        executor = Executor(toolset)
        elsewhere = await anyio.to_thread.run_sync(lambda: asyncio.run(call(executor, "add", a=1, b=2)))
        assert isinstance(elsewhere, ErrorEnvelope)
        assert elsewhere.error.code == "CONNECTION_INACTIVE"
        assert "another event loop" in elsewhere.error.message
        assert await call(executor, "add", a=1, b=2) == OkEnvelope(data={"total": 3})


async def test_cancelling_the_block_still_stops_the_server(tmp_path: Path, alive: Alive) -> None:
    pids = tmp_path / "pids"
    with anyio.CancelScope() as scope:
        async with mount("stdio", str(pids)):
            scope.cancel()  # as Ctrl-C cancels a run
            await anyio.sleep(60)
    assert not alive(int(pids.read_text().split()[0]))


async def test_cancelling_the_block_while_it_starts_stops_the_server(tmp_path: Path, alive: Alive) -> None:
    pids = tmp_path / "pids"
    never_answers = f"import os, time; open({str(pids)!r}, 'a').write(str(os.getpid())); time.sleep(60)"
    toolset = MCPToolset.stdio([sys.executable, "-c", never_answers])

    async def cancel_once_started(scope: anyio.CancelScope) -> None:
        assert await eventually(pids.exists)
        scope.cancel()  # the server runs, and has not answered: the block is still starting

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(cancel_once_started, scope)
            async with toolset:
                pytest.fail("the block must not run")
    assert not alive(int(pids.read_text()))
    assert toolset.closed
