"""Watching an MCP server's tool list: protocol revisions before 2026-07-28 send
`notifications/tools/list_changed` (the toolset's message handler hears them); 2026-07-28 on, the client
opens a `subscriptions/listen` stream and the server reports changes on it.

A server that rejects the stream, does not acknowledge it in time, does not honor tool changes, drops it
while the connection lives, or closes it at once again and again still lists and calls: its changes are
just not watched, which a warning on the `tether.mcp` logger says. Only a lost connection raises.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
import mcp_types as types
from mcp.client.subscriptions import SubscriptionLost
from mcp_types.version import is_version_at_least

from mcp import Client, MCPError

__all__ = ["listens", "watch_changes"]

_log = logging.getLogger("tether.mcp")
_QUICK_CLOSES = 3
"""Streams closed within a second of opening, in a row, after which a server is not asked again."""


def listens(client: Client) -> bool:
    """Whether the server reports tool list changes on a `subscriptions/listen` stream (2026-07-28 on); an
    older revision sends `notifications/tools/list_changed` instead."""
    tools = client.server_capabilities.tools
    listed_changes = tools is not None and bool(tools.list_changed)
    return listed_changes and is_version_at_least(client.protocol_version, "2026-07-28")


async def watch_changes(
    client: Client,
    server: str,
    ack_timeout_s: float,
    refresh: Callable[[], Awaitable[None]],
    check: Callable[[], Awaitable[None]],
    *,
    task_status: anyio.abc.TaskStatus[None],
) -> None:
    """`refresh` the tools at each change `server` reports on a `subscriptions/listen` stream; `started`
    once the server acknowledged it (so a listing after that misses no change), or gave up on it. A stream
    the server closes is opened again, and the tools refreshed. When the stream is lost after it worked,
    `check` decides whether the server is still there."""
    ready = _Once(task_status.started)
    quick_closes = 0
    while True:
        opened = time.monotonic()
        why = await _subscription(client, ack_timeout_s, refresh, ready)
        if why is None:  # closed gracefully: listen again, and list what may have changed meanwhile
            quick_closes = quick_closes + 1 if time.monotonic() - opened < 1 else 0
            if quick_closes < _QUICK_CLOSES:
                await refresh()
                continue
            why = "it closed the stream at once, again and again"
        _log.warning(
            "MCP server %s: %s; its tools still list and answer, but changes to its tool list are not "
            "watched (reconnecting lists them again).",
            server,
            why,
        )
        if ready.done:
            await check()  # was it only the stream, or did the server go away?
        ready()
        return


async def _subscription(
    client: Client, ack_timeout_s: float, refresh: Callable[[], Awaitable[None]], ready: _Once
) -> str | None:
    """One `subscriptions/listen` stream, refreshing the tools at each change, until it ends: None when the
    server closed it, else why changes cannot be watched. A lost connection raises."""
    with anyio.CancelScope(deadline=anyio.current_time() + ack_timeout_s) as acknowledging:
        try:
            async with client.listen(tools_list_changed=True) as changes:
                acknowledging.deadline = math.inf
                if not changes.honored.tools_list_changed:
                    return "it did not agree to report tool list changes (its answer left them out)"
                ready()  # the server acknowledged: changes from now on reach us
                async for _ in changes:
                    await refresh()
                return None
        except MCPError as e:
            if e.code == types.CONNECTION_CLOSED:
                raise  # the connection itself is gone: reconnect
            return f"it refused `subscriptions/listen` ({e.code}: {e.message})"
        except SubscriptionLost as e:
            cause = e.__cause__
            if isinstance(cause, MCPError) and cause.code == types.CONNECTION_CLOSED:
                raise
            return f"it dropped the stream ({cause or e})"
        except TimeoutError:
            return "it did not acknowledge `subscriptions/listen`"
    return f"it did not acknowledge `subscriptions/listen` within {ack_timeout_s:g}s"


class _Once:
    """Calls `action` the first time it is called, never again (a task's `started`)."""

    def __init__(self, action: Callable[[], object]):
        self.action = action
        self.done = False

    def __call__(self) -> None:
        if not self.done:
            self.done = True
            self.action()
