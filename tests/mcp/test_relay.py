"""`tether mcp serve` mounting an upstream MCP server whose tools change: tether's own clients, connected
over real stdio and HTTP, are told and list the new tools (2026-07-28 clients on their listen stream,
earlier ones by `notifications/tools/list_changed`), a flood is told a few times, and an upstream that dies
leaves the rest served."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp import Client, StdioServerParameters

CHANGING = Path(__file__).with_name("changing_server.py")
SDK_SERVER = Path(__file__).with_name("sdk_server.py")
LOCAL = '''
from tether.tools import tool


@tool(side_effects="none")
def shout(text: str) -> str:
    """Upper-case text."""
    return text.upper()
'''
Listening = Callable[..., str]  # the `listening` fixture (conftest.py): starts a server, returns its URL


def tether_serving(tmp_path: Path, upstream: Path, *args: str) -> list[str]:
    (tmp_path / "local.py").write_text(LOCAL)
    return [sys.executable, "-m", "tether", "mcp", "serve", "local.py", "--mcp", f"{sys.executable} {upstream}", *args]  # fmt: skip


def over_stdio(tmp_path: Path, upstream: Path) -> StdioServerParameters:
    argv = tether_serving(tmp_path, upstream)
    return StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(tmp_path))


class Heard:
    """The `notifications/tools/list_changed` an earlier revision's client got."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = anyio.Event()

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self._changed.set()

    async def next(self) -> None:
        with anyio.fail_after(10):
            await self._changed.wait()
        self._changed = anyio.Event()


async def names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools(cache_mode="refresh")).tools}


def error_code(result: types.CallToolResult) -> str:
    assert result.is_error
    assert result.structured_content is not None
    return result.structured_content["error"]["code"]


def text_of(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def test_an_earlier_revision_client_is_told_of_a_tool_added_and_removed_upstream(tmp_path: Path) -> None:
    async def main() -> None:
        heard = Heard()
        async with Client(over_stdio(tmp_path, CHANGING), mode="legacy", message_handler=heard) as client:
            assert client.protocol_version < "2026"
            tools = client.server_capabilities.tools
            assert tools is not None
            assert tools.list_changed  # clients are told to expect changes
            assert "fresh" not in await names(client)
            assert text_of(await client.call_tool("grow", {})) == "grown"
            await heard.next()
            assert {"fresh", "add", "shout"} <= await names(client)
            assert text_of(await client.call_tool("fresh", {})) == "fresh ran"
            assert text_of(await client.call_tool("drop", {})) == "dropped"
            await heard.next()
            assert "fresh" not in await names(client)
            assert error_code(await client.call_tool("fresh", {})) == "UNKNOWN_TOOL"  # an envelope, no crash

    anyio.run(main)


async def told_on_listen(client: Client, change: Callable[[], Any]) -> None:
    """`change()`, then wait for the 2026 listen stream to say the tools changed."""
    async with client.listen(tools_list_changed=True) as changes:
        await change()
        with anyio.fail_after(10):
            async for _ in changes:
                return


def test_a_2026_client_hears_on_its_listen_stream_of_a_tool_an_sdk_upstream_added(tmp_path: Path) -> None:
    async def main() -> None:
        async with Client(over_stdio(tmp_path, SDK_SERVER)) as client:
            assert client.protocol_version == "2026-07-28"
            tools = client.server_capabilities.tools
            assert tools is not None
            assert tools.list_changed
            assert "fresh" not in await names(client)
            await told_on_listen(client, lambda: client.call_tool("grow", {}))
            assert "fresh" in await names(client)
            assert text_of(await client.call_tool("fresh", {})) == "new"

    anyio.run(main)


def test_over_http_clients_of_both_eras_are_told_too(tmp_path: Path, listening: Listening) -> None:
    url = listening(
        tether_serving(tmp_path, CHANGING, "--http", "127.0.0.1:0"),
        cwd=tmp_path,
        env={**os.environ, "TETHER_MCP_TOKENS": "t0ken=ci"},
    )

    async def main() -> None:
        heard = Heard()
        async with (
            create_mcp_http_client(headers={"Authorization": "Bearer t0ken"}) as http,
            create_mcp_http_client(headers={"Authorization": "Bearer t0ken"}) as old_http,
            Client(streamable_http_client(url, http_client=http)) as client,
            Client(
                streamable_http_client(url, http_client=old_http), mode="legacy", message_handler=heard
            ) as old,
        ):
            assert client.protocol_version == "2026-07-28"
            assert old.protocol_version < "2026"
            await told_on_listen(client, lambda: client.call_tool("grow", {}))
            assert "fresh" in await names(client)
            await heard.next()
            assert "fresh" in await names(old)

    anyio.run(main)


def test_a_flooding_upstream_is_listed_a_few_times_and_told_a_few_times(tmp_path: Path) -> None:
    async def main() -> tuple[int, int, set[str]]:
        heard = Heard()
        async with Client(over_stdio(tmp_path, CHANGING), mode="legacy", message_handler=heard) as client:
            before = int(text_of(await client.call_tool("listings", {})))
            started = time.monotonic()
            assert text_of(await client.call_tool("flood", {"times": 3000})) == "flooded"
            while "flooded" not in await names(client):
                assert time.monotonic() - started < 20, "the flood's last change never arrived"
                await anyio.sleep(0.1)
            await anyio.sleep(0.5)  # anything still queued would arrive now
            listed = int(text_of(await client.call_tool("listings", {}))) - before - 1  # not `listings`'s
            assert text_of(await client.call_tool("shout", {"text": "still here"})) == "STILL HERE"
            return listed, heard.count, await names(client)

    listed, told, after = anyio.run(main)
    assert listed < 100  # 3001 notifications upstream: relisted once per burst, not once each
    assert 1 <= told <= 20  # told at most once a watch interval, however many changes
    assert not any(name.startswith("wave") for name in after)


def test_changes_spread_over_seconds_are_told_at_most_once_a_watch_interval(tmp_path: Path) -> None:
    async def main() -> tuple[int, float, set[str]]:
        heard = Heard()
        async with Client(over_stdio(tmp_path, CHANGING), mode="legacy", message_handler=heard) as client:
            started = time.monotonic()
            flooding = await client.call_tool("flood", {"times": 300, "pause_s": 0.005})
            assert text_of(flooding) == "flooding"
            while "flooded" not in await names(client):
                assert time.monotonic() - started < 20, "the flood's last change never arrived"
                await anyio.sleep(0.1)
            await anyio.sleep(0.5)
            return heard.count, time.monotonic() - started, await names(client)

    told, took, after = anyio.run(main)
    assert 2 <= told <= took / 0.2 + 1  # 301 changes: told during the flood, once a 0.2 s interval at most
    assert "flooded" in after


def test_an_upstream_that_dies_answers_a_clear_error_and_the_rest_stays_served(tmp_path: Path) -> None:
    async def main() -> None:
        heard = Heard()
        async with Client(over_stdio(tmp_path, CHANGING), mode="legacy", message_handler=heard) as client:
            assert text_of(await client.call_tool("grow", {})) == "grown"
            await heard.next()
            died = await client.call_tool("die", {})
            assert died.is_error  # the call in flight when it died
            after = await client.call_tool("add", {"a": 1, "b": 2})
            assert error_code(after) == "CONNECTION_INACTIVE"
            assert after.structured_content is not None
            error = after.structured_content["error"]
            assert "not connected" in error["message"]
            assert error["suggestion"]
            assert text_of(await client.call_tool("shout", {"text": "hi"})) == "HI"
            assert {"shout", "add"} <= await names(client)  # listed still: it is being restarted
            await heard.next()  # restarted, it lists what it had at its start: `fresh` is gone
            assert "fresh" not in await names(client)
            assert text_of(await client.call_tool("add", {"a": 1, "b": 2})) == "3"

    anyio.run(main)
