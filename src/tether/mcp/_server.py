"""Any tether toolset served as an MCP server: every call through an `Executor`, refusals as tool errors.

Over stdio the caller is the user who started the process (one `Principal` for the whole session). Over
streamable HTTP every request must carry `Authorization: Bearer <token>`, and the token names the
principal and its scopes; requests without a known token are refused before they reach a tool.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette

from tether.exceptions import UserError
from tether.execution import Executor, Principal, Run
from tether.mcp._relay import ToolListRelay
from tether.mcp._results import call_result, mcp_tool, published_name
from tether.tools import AbstractToolset
from tether.types import ToolCall

__all__ = ["BearerTokens", "mcp_server", "serve_stdio", "streamable_http_app"]


def mcp_server(
    executor: Executor,
    *,
    principal: Principal | None = None,
    name: str = "tether",
    watch_interval_s: float = 0.2,
) -> Server[Any]:
    """An MCP server (the SDK's low-level `Server`) answering with `executor`'s tools and guards.

    When the tools change (an MCP server in the toolset changed its own), connected clients are told:
    2026-07-28 clients on their `subscriptions/listen` stream, earlier ones by
    `notifications/tools/list_changed`; a burst of changes is told once.

    Args:
        executor: Runs every call: validation, `why`, scopes, idempotency, journal, timeouts.
        principal: Who the calls run for when the transport names no one (stdio).
        name: The server's name, as clients show it.
        watch_interval_s: How often the tools are looked at for a change (an identity check): the longest
            a change waits before clients are told, and the shortest time between two notifications.
    """
    runs: dict[Principal, Run] = {}  # one run per caller: quotas and idempotency span its session
    relay = ToolListRelay(executor.toolset, _listing, interval_s=watch_interval_s)

    async def list_tools(_: Any, __: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_listing(executor.toolset))

    async def call_tool(_: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        caller = _caller() or principal or Principal()
        run = runs.setdefault(caller, Run(principal=caller, session_id=f"mcp-{os.urandom(6).hex()}"))
        call = ToolCall(
            id=f"mcp-{os.urandom(8).hex()}", name=params.name, arguments=dict(params.arguments or {})
        )
        return call_result(await executor.execute(call, run))

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with relay.watching():
            yield {}

    server = _Server(
        name,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=relay.listen,
    )
    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, relay.on_initialized
    )
    return server


def _listing(toolset: AbstractToolset) -> list[types.Tool]:
    return [mcp_tool(s, published_name(s.name, toolset.alias_of(s.name))) for s in toolset.specs()]


class _Server(Server[Any]):
    """The SDK's server, telling clients of earlier revisions that their tool list may change (2026-07-28
    clients learn it from `subscriptions/listen` being served), whichever transport asks."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def _caller() -> Principal | None:
    """The principal of the HTTP request's bearer token, if this call came over HTTP."""
    token = get_access_token()
    if token is None:
        return None
    return Principal(token.client_id, frozenset(token.scopes))


async def serve_stdio(
    executor: Executor, *, principal: Principal | None = None, name: str = "tether"
) -> None:
    """Serve `executor`'s tools on this process's stdin and stdout until the client hangs up."""
    server = mcp_server(executor, principal=principal, name=name)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


class BearerTokens:
    """The bearer tokens an HTTP server accepts, each naming a principal and its scopes.

    Args:
        tokens: token -> the principal it stands for, e.g. `{"s3cr3t": Principal("ci", frozenset({"fs"}))}`.
    """

    def __init__(self, tokens: Mapping[str, Principal]):
        unnamed = [p for p in tokens.values() if p.id is None]
        if unnamed or not all(tokens):
            raise UserError(
                "BearerTokens maps non-empty tokens to named principals, e.g. {token: Principal('ci')}."
            )
        self._tokens = [(token.encode(), p) for token, p in tokens.items()]

    async def verify_token(self, token: str) -> AccessToken | None:
        given = token.encode()
        found: Principal | None = None
        for known, principal in self._tokens:  # every token compared in constant time: no timing oracle
            if hmac.compare_digest(known, given):
                found = principal
        if found is None or found.id is None:
            return None
        return AccessToken(token=token, client_id=found.id, scopes=sorted(found.scopes))


def streamable_http_app(
    executor: Executor, tokens: BearerTokens, *, url: str = "http://127.0.0.1:8000", name: str = "tether"
) -> Starlette:
    """An ASGI app serving `executor`'s tools at `<url>/mcp`; every request needs a known bearer token."""
    server = mcp_server(executor, name=name)
    auth = AuthSettings(  # the tokens are ours, not an OAuth server's: no audience to check
        issuer_url=url,  # pyright: ignore[reportArgumentType] - pydantic parses the URL
        resource_server_url=f"{url}/mcp",  # pyright: ignore[reportArgumentType]
        validate_token_resource=False,
    )
    return server.streamable_http_app(
        auth=auth, token_verifier=tokens, host=url.split("//")[-1].split(":")[0]
    )
