"""Telling tether's own MCP clients that the tools it serves changed (an upstream MCP server's did).

The served toolset is looked at every `interval_s`: a toolset hands out a new mapping only when its tools
change (`AbstractToolset.tools`), so a look costs an identity check, and the listing is compared only then.
When the listing clients see differs from the one they were last told of, each client is told once:

- a 2026-07-28 client on its `subscriptions/listen` stream (the SDK's `ListenHandler`, fed by its bus);
- a client of an earlier revision by `notifications/tools/list_changed` on its connection.

However many changes happen between two looks, clients hear of them once, and nothing queues up: the
relay keeps one listing, not a backlog. A client that does not read its notifications holds the relay for
at most `_SEND_TIMEOUT_S`, after which that notification to it is dropped (its next listing is still fresh).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

from tether.tools import AbstractToolset

__all__ = ["ToolListRelay"]

_log = logging.getLogger("tether.mcp")
_SEND_TIMEOUT_S = 5.0
"""How long one client may take to accept a notification before it is dropped for that client."""
_UNLISTABLE = object()
_MAX_LISTENERS = 256
"""Open `subscriptions/listen` streams at most; a further one is refused (the client still lists)."""


class ToolListRelay:
    """Watches `toolset` and tells every connected client when the tools it lists change.

    Args:
        toolset: The served tools.
        listing: The listing clients see of a toolset (names as published, specs as MCP tools).
        interval_s: How often the toolset is looked at: the longest a change waits to be told, and the
            shortest time between two notifications to one client.
    """

    def __init__(
        self,
        toolset: AbstractToolset,
        listing: Callable[[AbstractToolset], list[types.Tool]],
        *,
        interval_s: float = 0.2,
    ):
        self.toolset = toolset
        self.listing = listing
        self.interval_s = interval_s
        self._bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self._bus, max_subscriptions=_MAX_LISTENERS, max_buffered_events=8)
        """The `subscriptions/listen` handler 2026-07-28 clients are told through."""
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        """Connections of earlier revisions, held only while they are served."""

    async def on_initialized(
        self, ctx: ServerRequestContext[Any], _: types.NotificationParams | None
    ) -> None:
        """An earlier revision's client finished its handshake: it is told of changes from now on."""
        connection: Connection = ctx.session._connection  # pyright: ignore[reportPrivateUsage] - the SDK's session names its connection nowhere else
        self._connections.add(connection)

    @asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """Watch the toolset for the block (the server's lifespan); listen streams end gracefully after."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch)
            try:
                yield
            finally:
                self.listen.close()
                group.cancel_scope.cancel()

    async def _watch(self) -> None:
        tools = self._tools()
        told = self._listing()
        while True:
            await anyio.sleep(self.interval_s)
            now = self._tools()
            if now is tools:
                continue
            tools = now
            listing = self._listing()
            if listing is None or listing == told:
                continue  # listed again, but the same tools (or not listable now): nothing to tell
            told = listing
            await self._tell()

    def _tools(self) -> object:
        try:
            return self.toolset.tools()
        except Exception:  # e.g. an upstream now lists a name another toolset has: listing says why
            return _UNLISTABLE

    def _listing(self) -> list[types.Tool] | None:
        try:
            return self.listing(self.toolset)
        except Exception as e:
            _log.warning("The served tools cannot be listed now, clients are not told of a change: %s", e)
            return None

    async def _tell(self) -> None:
        await self._bus.publish(ToolsListChanged())
        async with anyio.create_task_group() as group:
            for connection in list(self._connections):
                group.start_soon(_notify, connection)


async def _notify(connection: Connection) -> None:
    with anyio.move_on_after(_SEND_TIMEOUT_S):
        await connection.send_tool_list_changed()  # never raises: a closed connection drops it
