"""`tether mcp serve`: tools from any source served to MCP clients, every call through tether's guards."""

from __future__ import annotations

import getpass
import os
import socket
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from tether.cli._journal import open_journal
from tether.cli._run import (
    JournalOption,
    McpOption,
    McpUrlOption,
    PackOption,
    RootOption,
    agent_tools,
    mcp_servers,
    opened,
)
from tether.exceptions import UserError
from tether.execution import Executor, Principal

if TYPE_CHECKING:
    from tether.mcp import BearerTokens, MCPToolset

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    mcp = typer.Typer(help="Serve tether tools over the Model Context Protocol.", no_args_is_help=True)

    @mcp.command("serve")
    def serve(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        sources: Annotated[
            list[str] | None, typer.Argument(help="Tool sources: modules, or .py, .yaml, .ts or .json files.")
        ] = None,
        pack: PackOption = None,
        root: RootOption = None,
        mcp: McpOption = None,
        mcp_url: McpUrlOption = None,
        scope: Annotated[
            list[str] | None, typer.Option(help="A scope the client holds, for tools that require scopes.")
        ] = None,
        journal: JournalOption = None,
        http: Annotated[
            str | None,
            typer.Option(
                help="Serve streamable HTTP at HOST:PORT (path /mcp; port 0 picks a free one) instead of stdio, "
                "printing the address once it listens. Each request needs a bearer token from "
                "TETHER_MCP_TOKENS: 'TOKEN=principal:scope,scope OTHER=guest'."
            ),
        ] = None,
    ) -> None:
        """Serve tools to an MCP client, with every guard applied to every call.

        Validation, `why`, scopes, idempotency and the journal apply to every call, and refusals reach the
        client as tool errors carrying the envelope.

        Over stdio the client runs this command itself (e.g. in its config: tether mcp serve --pack fs
        tools.py) and holds the --scope given; over --http each token names its principal and scopes.
        """
        tokens = _tokens(os.environ.get("TETHER_MCP_TOKENS", "")) if http is not None else None
        servers = mcp_servers(mcp, mcp_url)
        toolset = agent_tools(sources or [], pack or [], root or [], servers=servers)
        executor = Executor(toolset, journal=open_journal(journal, existing=False) if journal else None)

        from tether import mcp as tether_mcp  # the optional MCP SDK, imported only when serving

        if http is None:
            principal = Principal(getpass.getuser(), frozenset(scope or ()))

            async def serve_stdio() -> None:
                async with opened(servers):  # mounted servers live on the serving loop, for its lifetime
                    await tether_mcp.serve_stdio(executor, principal=principal)

            anyio.run(serve_stdio)
            return
        host, _, port = http.rpartition(":")
        if not host or not port.isdigit():
            raise UserError(
                f"--http takes HOST:PORT (PORT 0: any free one), e.g. --http 127.0.0.1:8000; got {http!r}."
            )
        assert tokens is not None
        _serve_http(executor, tether_mcp.BearerTokens(tokens), host, int(port), servers)

    app.add_typer(mcp, name="mcp")


def _serve_http(
    executor: Executor, tokens: BearerTokens, host: str, port: int, servers: Sequence[MCPToolset]
) -> None:
    """Listen first (port 0: the system picks), say where on stdout, then serve until interrupted, with the
    mounted `servers` on the serving loop for its lifetime."""
    import uvicorn

    from tether.mcp import streamable_http_app

    try:
        listener = socket.create_server((host, port))
    except OSError as e:
        raise UserError(
            f"Cannot listen on {host}:{port}: {e.strerror or e}; pick another --http HOST:PORT."
        ) from None
    bound = listener.getsockname()[1]
    url = f"http://{host}:{bound}"
    app = streamable_http_app(executor, tokens, url=url)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))

    async def serve() -> None:
        async with opened(servers):
            typer.echo(f"tether: serving MCP at {url}/mcp")
            sys.stdout.flush()
            await server.serve(sockets=[listener])

    anyio.run(serve)


def _tokens(text: str) -> dict[str, Principal]:
    """`TOKEN=principal:scope,scope OTHER=guest` -> token -> Principal."""
    tokens: dict[str, Principal] = {}
    for entry in text.split():
        token, _, holder = entry.partition("=")
        name, _, scopes = holder.partition(":")
        if not token or not name:
            raise UserError(
                "TETHER_MCP_TOKENS takes space-separated TOKEN=principal[:scope,scope] entries, e.g. "
                f"'s3cr3t=ci:fs.read'; {entry[:3] + '...'!r} is not one."
            )
        tokens[token] = Principal(name, frozenset(s for s in scopes.split(",") if s))
    if not tokens:
        raise UserError(
            "Serving over --http needs bearer tokens: set TETHER_MCP_TOKENS to space-separated "
            "TOKEN=principal[:scope,scope] entries, e.g. export TETHER_MCP_TOKENS='s3cr3t=ci:fs.read'."
        )
    return tokens
