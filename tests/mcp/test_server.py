"""`tether mcp serve`, driven by the official SDK's own client over a real stdio connection."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest

from mcp import Client, StdioServerParameters
from tether.exceptions import UserError
from tether.execution import Executor, Principal
from tether.mcp import BearerTokens, MCPToolset, mcp_server
from tether.mcp._results import call_result, mcp_tool
from tether.tools import AbstractToolset, Tool, Toolset, tool
from tether.types import ErrorEnvelope, ErrorInfo, NeedsEnvelope, OkEnvelope, ToolCall

TOOLS = '''
from tether.tools import tool


@tool(side_effects="none")
def shout(text: str) -> dict[str, str]:
    """Upper-case text."""
    return {"loud": text.upper()}


@tool(requires_why=True)
def remove(path: str) -> str:
    """Remove a file."""
    return f"removed {path}"


@tool(side_effects="mutating", scopes=["admin"])
def reset() -> str:
    """Reset everything."""
    return "reset"
'''
SERVER = Path(__file__).with_name("sdk_server.py")
Listening = Callable[..., str]  # the `listening` fixture (conftest.py): starts a server, returns its URL


def tether_serve(tmp_path: Path, *args: str) -> StdioServerParameters:
    (tmp_path / "tools.py").write_text(TOOLS)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tether", "mcp", "serve", *args], cwd=str(tmp_path)
    )


async def session(params: StdioServerParameters, *calls: tuple[str, dict[str, Any]]) -> tuple[
    list[types.Tool], list[types.CallToolResult]
]:  # fmt: skip
    async with Client(params) as client:
        listed = (await client.list_tools()).tools
        return listed, [await client.call_tool(name, arguments) for name, arguments in calls]


def test_the_sdk_client_lists_tethers_tools_with_side_effects_as_annotations(tmp_path: Path) -> None:
    listed, _ = anyio.run(session, tether_serve(tmp_path, "tools.py"))
    by_name = {t.name: t for t in listed}
    assert sorted(by_name) == ["remove", "reset", "shout"]
    assert by_name["shout"].annotations == types.ToolAnnotations(read_only_hint=True, idempotent_hint=True)
    assert by_name["reset"].annotations == types.ToolAnnotations(
        read_only_hint=False, idempotent_hint=False, destructive_hint=True
    )
    assert "why" in by_name["remove"].input_schema["required"]  # the model is asked for its intent


def test_calls_run_and_refusals_are_tool_errors_carrying_the_envelope(tmp_path: Path) -> None:
    _, (loud, no_why, no_scope, unknown) = anyio.run(
        session,
        tether_serve(tmp_path, "tools.py"),
        ("shout", {"text": "hi"}),
        ("remove", {"path": "a.txt"}),
        ("reset", dict[str, Any]()),
        ("shuot", {"text": "hi"}),
    )
    assert not loud.is_error
    assert loud.structured_content == {"loud": "HI"}
    expected = (
        (no_why, "MISSING_WHY", True),
        (no_scope, "SCOPES_MISSING", False),
        (unknown, "UNKNOWN_TOOL", True),
    )
    for refused, code, recoverable in expected:
        assert refused.is_error
        assert refused.structured_content is not None
        error = refused.structured_content["error"]
        assert (error["code"], error["recoverable"]) == (code, recoverable)
        assert error["suggestion"]
    assert unknown.structured_content is not None
    assert unknown.structured_content["error"]["details"]["closest"] == ["shout"]


def test_scopes_given_to_serve_are_the_clients(tmp_path: Path) -> None:
    _, (reset,) = anyio.run(
        session, tether_serve(tmp_path, "tools.py", "--scope", "admin"), ("reset", dict[str, Any]())
    )
    assert not reset.is_error
    assert reset.content == [types.TextContent(type="text", text="reset")]


def test_tether_serves_a_toolset_that_mounts_another_mcp_server(tmp_path: Path) -> None:
    upstream = f"{sys.executable} {SERVER}"
    listed, (added, refused) = anyio.run(
        session,
        tether_serve(tmp_path, "--mcp", upstream),
        ("add", {"a": 2, "b": 2}),
        ("add", {"a": "two", "b": 2}),
    )
    assert {"add", "echo"} <= {t.name for t in listed}
    assert added.structured_content == {"total": 4}
    assert refused.is_error  # tether's validation answered: the upstream server never saw the call
    assert refused.structured_content is not None
    assert refused.structured_content["error"]["code"] == "INVALID_ARGS"


def test_an_in_process_server_answers_the_sdk_client_through_the_executor() -> None:
    @tool(side_effects="idempotent")
    def double(n: int) -> int:
        return n * 2

    async def main() -> types.CallToolResult:
        async with Client(mcp_server(Executor(Toolset(double)))) as client:
            return await client.call_tool("double", {"n": 21})

    result = anyio.run(main)
    assert result.content == [types.TextContent(type="text", text="42")]
    assert result.structured_content is None  # not an object: MCP's structured content must be one


class Changing(AbstractToolset):
    """A toolset whose tools the test changes, as an MCP server's change when it says so."""

    def __init__(self, *tools: Tool[..., Any]):
        self.now: Mapping[str, Tool[..., Any]] = {t.name: t for t in tools}

    def tools(self) -> Mapping[str, Tool[..., Any]]:
        return self.now


def test_an_in_process_2026_client_is_told_on_its_listen_stream_and_lists_the_new_tool() -> None:
    @tool(side_effects="none")
    def double(n: int) -> int:
        return n * 2

    @tool(side_effects="none")
    def triple(n: int) -> int:
        return n * 3

    toolset = Changing(double)

    async def main() -> tuple[types.ToolsCapability | None, list[str], types.CallToolResult]:
        async with Client(mcp_server(Executor(toolset), watch_interval_s=0.01)) as client:
            async with client.listen(tools_list_changed=True) as changes:
                toolset.now = {"double": double, "triple": triple}
                with anyio.fail_after(5):
                    async for _ in changes:
                        break
            names = [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
            return client.server_capabilities.tools, names, await client.call_tool("triple", {"n": 2})

    capability, names, tripled = anyio.run(main)
    assert capability is not None
    assert capability.list_changed
    assert names == ["double", "triple"]
    assert tripled.content == [types.TextContent(type="text", text="6")]


def test_a_new_mapping_with_the_same_tools_tells_no_one() -> None:
    @tool(side_effects="none")
    def double(n: int) -> int:
        return n * 2

    toolset = Changing(double)

    async def main() -> bool:
        async with (
            Client(mcp_server(Executor(toolset), watch_interval_s=0.01)) as client,
            client.listen(tools_list_changed=True) as changes,
        ):
            toolset.now = {"double": double}  # listed again by its server: same tools, new mapping
            with anyio.move_on_after(0.3):
                async for _ in changes:
                    return True
            return False

    assert not anyio.run(main)


def test_names_mcp_forbids_are_published_as_their_alias_and_still_found() -> None:
    @tool(name="db:query", side_effects="none")
    def query() -> str:
        return "rows"

    async def main() -> tuple[list[str], types.CallToolResult]:
        async with Client(mcp_server(Executor(Toolset(query)))) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            return names, await client.call_tool(names[0], {})

    names, result = anyio.run(main)
    assert names == ["db_query"]
    assert result.content == [types.TextContent(type="text", text="rows")]


def test_an_error_envelope_becomes_an_is_error_result_with_the_envelope() -> None:
    envelope = ErrorEnvelope(
        error=ErrorInfo(code="NOT_FOUND", message="no a.txt", recoverable=True, suggestion="ls")
    )
    result = call_result(envelope)
    assert result.is_error
    assert result.structured_content == {
        "ok": False, "error": {"code": "NOT_FOUND", "message": "no a.txt", "recoverable": True, "suggestion": "ls"}
    }  # fmt: skip
    assert call_result(OkEnvelope(data={"a": 1})).structured_content == {"a": 1}


def test_only_object_output_schemas_are_published() -> None:
    @tool
    def count() -> int:
        return 1

    assert count.spec.output_schema is not None
    assert mcp_tool(count.spec, "count").output_schema is None


CLOCK = """
from tether.tools import tool


@tool(side_effects="none", scopes=["clock.read"])
def now() -> str:
    return "noon"
"""


def test_over_http_a_bearer_token_names_the_principal_and_its_scopes(
    tmp_path: Path, listening: Listening
) -> None:
    (tmp_path / "clock.py").write_text(CLOCK)
    served = listening(
        [sys.executable, "-m", "tether", "mcp", "serve", "clock.py", "--http", "127.0.0.1:0"],
        cwd=tmp_path,
        env={**os.environ, "TETHER_MCP_TOKENS": "good-token=ci:clock.read weak-token=guest"},
    )
    assert re.fullmatch(r"http://127\.0\.0\.1:[1-9][0-9]*/mcp", served)  # the port bound, not 0
    url = served
    with MCPToolset.http(url, headers={"Authorization": "Bearer good-token"}, max_backoff_s=0.5) as good:
        assert call(good, "now") == OkEnvelope(data="noon")
    with MCPToolset.http(url, auth=SignWith("good-token")) as signed:  # as the SDK's OAuth provider signs
        assert call(signed, "now") == OkEnvelope(data="noon")
    with MCPToolset.http(url, headers={"Authorization": "Bearer weak-token"}) as weak:
        refused = call(weak, "now")
        assert isinstance(refused, ErrorEnvelope)
        assert refused.error.code == "TOOL_ERROR"  # the server's isError, as tether's client reads it
        assert "SCOPES_MISSING" in refused.error.message
    for headers in ({}, {"Authorization": "Bearer good-token-but-not-quite"}):
        answer = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
        assert answer.status_code == 401


class SignWith(httpx2.Auth):
    def __init__(self, token: str):
        self.token = token

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


def test_bearer_tokens_must_name_their_principal() -> None:
    with pytest.raises(UserError, match="named principals"):
        BearerTokens({"t": Principal()})


def call(toolset: MCPToolset, name: str) -> OkEnvelope | ErrorEnvelope:
    envelope = anyio.run(lambda: Executor(toolset).execute(ToolCall(id="c1", name=name)))
    assert not isinstance(envelope, NeedsEnvelope)
    return envelope


def test_over_http_a_mounted_server_is_served_and_stopped_with_tether(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    upstream = f"{sys.executable} {SERVER} stdio {pids}"
    process = subprocess.Popen(
        [sys.executable, "-m", "tether", "mcp", "serve", "--mcp", upstream, "--http", "127.0.0.1:0"],
        cwd=tmp_path,
        env={**os.environ, "TETHER_MCP_TOKENS": "tok=ci"},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready = process.stdout.readline()  # printed once the mounted server listed its tools
        url = ready.rsplit(" ", 1)[-1].strip()
        assert url.startswith("http://127.0.0.1:"), ready
        with MCPToolset.http(url, headers={"Authorization": "Bearer tok"}) as served:
            envelope = anyio.run(
                lambda: Executor(served).execute(ToolCall(id="c1", name="add", arguments={"a": 2, "b": 5}))
            )
            assert envelope == OkEnvelope(data={"total": 7})  # through tether's guards, to the SDK server
        upstream_pid = int(pids.read_text().split()[0])
        process.send_signal(signal.SIGINT)  # as Ctrl-C stops it
        assert process.wait(timeout=30) in (0, 130)  # 130: ended by the interrupt, as shells report it
        assert not process_alive(upstream_pid)  # the mounted server stopped with tether
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def process_alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
