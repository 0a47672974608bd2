"""MCPToolset against a server written with the official SDK, run as a real subprocess."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from tether.exceptions import UserError
from tether.execution import Executor, Policy
from tether.mcp import MCPToolset
from tether.tools import Toolset, tool
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

SERVER = Path(__file__).with_name("sdk_server.py")
Listening = Callable[..., str]  # the `listening` fixture (conftest.py): starts a server, returns its URL


@pytest.fixture(scope="module")
def server() -> Iterator[MCPToolset]:
    with MCPToolset.stdio([sys.executable, str(SERVER)], max_backoff_s=1) as toolset:
        yield toolset


def call(executor: Executor, name: str, **arguments: object) -> OkEnvelope | ErrorEnvelope:
    envelope = anyio.run(lambda: executor.execute(ToolCall(id="c1", name=name, arguments=dict(arguments))))
    assert not isinstance(envelope, dict)
    return envelope  # pyright: ignore[reportReturnType] - no tool here asks for input


def test_annotations_become_side_effects_and_output_schemas_are_kept(server: MCPToolset) -> None:
    effects = {name: t.spec.side_effects for name, t in server.tools().items()}
    assert effects["add"] == "none"  # readOnlyHint
    assert effects["set_flag"] == "idempotent"  # idempotentHint
    assert effects["delete_all"] == "mutating"  # destructiveHint
    assert effects["echo"] == "mutating"  # no hints at all
    assert server.tools()["add"].spec.output_schema == {
        "type": "object", "title": "Sum", "properties": {"total": {"title": "Total", "type": "integer"}},
        "required": ["total"],
    }  # fmt: skip


def test_calls_go_through_the_executor_and_keep_structured_content(server: MCPToolset) -> None:
    executor = Executor(server)
    assert call(executor, "add", a=2, b=3) == OkEnvelope(data={"total": 5})
    invalid = call(executor, "add", a="two")
    assert isinstance(invalid, ErrorEnvelope)
    assert invalid.error.code == "INVALID_ARGS"  # refused by tether: the server never saw it


def test_a_tool_error_on_the_server_is_an_envelope_the_model_can_act_on(server: MCPToolset) -> None:
    failed = call(Executor(server), "fail", reason="boom")
    assert isinstance(failed, ErrorEnvelope)
    assert failed.error.code == "TOOL_ERROR"
    assert failed.error.recoverable
    assert failed.error.suggestion


def test_the_servers_stderr_is_captured_not_printed(
    server: MCPToolset, capfd: pytest.CaptureFixture[str]
) -> None:
    assert call(Executor(server), "echo", text="hello") == OkEnvelope(data={"result": "hello"})
    time.sleep(0.2)
    assert "echo was called with 'hello'" in server.stderr_tail()
    assert "echo was called" not in capfd.readouterr().err


def test_resources_are_reachable_through_a_read_resource_tool(server: MCPToolset) -> None:
    read = server.tools()["read_resource"]
    assert read.spec.side_effects == "none"
    assert call(Executor(server), "read_resource", uri="note://greeting") == OkEnvelope(
        data="hello from a resource"
    )


def test_prompts_are_reachable_through_a_get_prompt_tool(server: MCPToolset) -> None:
    assert "review(language)" in server.tools()["get_prompt"].spec.description
    prompt = ToolCall(
        id="c1", name="get_prompt", arguments={"name": "review", "arguments": {"language": "Rust"}}
    )
    envelope = anyio.run(Executor(server).execute, prompt)
    assert envelope == OkEnvelope(
        data=[{"role": "user", "type": "text", "text": "Review this Rust code for bugs."}]
    )


def test_it_prefixes_filters_and_combines_like_any_toolset(server: MCPToolset) -> None:
    @tool(side_effects="none")
    def local() -> str:
        return "here"

    combined = Toolset(local) | server.prefixed("calc").filtered(lambda t: t.spec.side_effects == "none")
    assert sorted(combined.names()) == [
        "calc.add",
        "calc.get_prompt",
        "calc.read_resource",
        "calc.where",
        "local",
    ]
    assert call(Executor(combined), "calc.add", a=1, b=1) == OkEnvelope(data={"total": 2})


def wait_for(check: object, executor: Executor, name: str, **arguments: object) -> OkEnvelope | ErrorEnvelope:
    deadline = time.monotonic() + 60
    while True:
        envelope = call(executor, name, **arguments)
        if envelope.ok or time.monotonic() > deadline:
            return envelope
        time.sleep(0.3)


def test_a_crashed_server_answers_connection_inactive_and_is_restarted() -> None:
    with MCPToolset.stdio([sys.executable, str(SERVER)], max_backoff_s=1) as toolset:
        executor = Executor(toolset)
        crashed = call(executor, "crash")
        assert isinstance(crashed, ErrorEnvelope)
        assert crashed.error.code == "CONNECTION_INACTIVE"
        assert crashed.error.recoverable
        assert "call again" in (crashed.error.suggestion or "")
        assert wait_for(None, executor, "add", a=1, b=2) == OkEnvelope(data={"total": 3})


def test_a_hung_server_times_out_then_is_found_hung_and_restarted() -> None:
    with MCPToolset.stdio([sys.executable, str(SERVER)], max_backoff_s=1, ping_timeout_s=1) as toolset:
        executor = Executor(toolset, policy=Policy(default_timeout_s=1))
        hung = call(executor, "hang", seconds=120)
        assert isinstance(hung, ErrorEnvelope)
        assert hung.error.code == "TIMEOUT"
        time.sleep(1.5)  # the ping after the timeout goes unanswered
        during = call(executor, "add", a=1, b=2)
        assert isinstance(during, ErrorEnvelope)
        assert during.error.code == "CONNECTION_INACTIVE"
        assert "(hung)" in during.error.message
        assert wait_for(None, executor, "add", a=1, b=2) == OkEnvelope(data={"total": 3})


def test_a_slow_tool_that_times_out_leaves_a_server_that_still_answers_alone() -> None:
    with MCPToolset.stdio([sys.executable, str(SERVER)], ping_timeout_s=2) as toolset:
        executor = Executor(toolset, policy=Policy(default_timeout_s=1))
        slow = call(executor, "slow", seconds=5)
        assert isinstance(slow, ErrorEnvelope)
        assert slow.error.code == "TIMEOUT"
        assert call(executor, "add", a=1, b=2) == OkEnvelope(data={"total": 3})  # no restart in between


def test_after_close_calls_answer_connection_inactive_not_recoverable() -> None:
    toolset = MCPToolset.stdio([sys.executable, str(SERVER)])
    executor = Executor(toolset)
    assert call(executor, "add", a=1, b=2).ok
    toolset.close()
    closed = call(executor, "add", a=1, b=2)
    assert isinstance(closed, ErrorEnvelope)
    assert closed.error.code == "CONNECTION_INACTIVE"
    assert not closed.error.recoverable


def test_a_server_that_cannot_start_is_a_user_error_naming_it() -> None:
    toolset = MCPToolset.stdio("/nonexistent/mcp-server --flag")
    with toolset, pytest.raises(UserError, match="/nonexistent/mcp-server --flag did not start"):
        toolset.tools()


def test_a_bad_url_is_a_user_error() -> None:
    with pytest.raises(UserError, match="http:// or https://"):
        MCPToolset.http("localhost:8000/mcp")


# the SDK's legacy SSE client leaves one socket to the garbage collector when it closes (not ours to close)
SSE_SOCKET = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.mark.parametrize(
    ("transport", "path", "mount"),
    [
        ("streamable-http", "/mcp", MCPToolset.http),
        pytest.param("sse", "/sse", MCPToolset.sse, marks=SSE_SOCKET),
    ],
)
def test_it_mounts_servers_over_http_transports(
    transport: str, path: str, mount: type[MCPToolset], listening: Listening
) -> None:
    url = listening([sys.executable, str(SERVER), transport])
    with mount(f"{url}{path}", max_backoff_s=0.5) as toolset:  # pyright: ignore[reportCallIssue]
        assert call(Executor(toolset), "add", a=4, b=5) == OkEnvelope(data={"total": 9})


def test_a_changed_tool_list_refreshes_the_toolset() -> None:
    with MCPToolset.stdio([sys.executable, str(SERVER)]) as toolset:
        before = toolset.tools()
        assert "fresh" not in before
        assert call(Executor(toolset), "grow").ok
        deadline = time.monotonic() + 10
        while "fresh" not in toolset.tools() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "fresh" in toolset.tools()
        assert toolset.tools() is not before  # a new mapping, so toolsets built on it rebuild


def test_a_server_that_exits_at_once_is_reported_with_its_stderr_without_waiting_out_the_timeout() -> None:
    started = time.monotonic()
    toolset = MCPToolset.stdio([sys.executable, "-c", "import sys; sys.exit('no config file found')"])
    with toolset, pytest.raises(UserError, match="its stderr ends: no config file found"):
        toolset.tools()
    assert time.monotonic() - started < toolset.connect_timeout_s / 2  # three failed starts, then the error


def test_nothing_starts_before_the_first_use_and_a_toolset_closed_unused_says_so() -> None:
    toolset = MCPToolset.stdio([sys.executable, str(SERVER)])
    assert toolset._thread is None  # pyright: ignore[reportPrivateUsage] - how it is opened decides where it runs
    toolset.close()
    started = time.monotonic()
    with pytest.raises(UserError, match="was closed before it listed its tools"):
        toolset.tools()
    assert time.monotonic() - started < 1  # at once, not after the connect timeout
