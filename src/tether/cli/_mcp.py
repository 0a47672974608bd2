"""`tether mcp serve`: tools from any source served to MCP clients, every call through tether's guards."""

from __future__ import annotations

import getpass
import os
from typing import Annotated

import anyio
import typer

from tether.cli._journal import open_journal
from tether.cli._run import JournalOption, McpOption, McpUrlOption, PackOption, RootOption, agent_tools
from tether.exceptions import UserError
from tether.execution import Executor, Principal

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
                help="Serve streamable HTTP at HOST:PORT (path /mcp) instead of stdio. Each request needs a "
                "bearer token from TETHER_MCP_TOKENS: 'TOKEN=principal:scope,scope OTHER=guest'."
            ),
        ] = None,
    ) -> None:
        """Serve tools to an MCP client: validation, `why`, scopes, idempotency and the journal apply to
        every call, and refusals reach the client as tool errors carrying the envelope.

        Over stdio the client runs this command itself (e.g. in its config: tether mcp serve --pack fs
        tools.py) and holds the --scope given; over --http each token names its principal and scopes.
        """
        tokens = _tokens(os.environ.get("TETHER_MCP_TOKENS", "")) if http is not None else None
        toolset = agent_tools(sources or [], pack or [], root or [], mcp=mcp, mcp_urls=mcp_url)
        executor = Executor(toolset, journal=open_journal(journal, existing=False) if journal else None)

        from tether import mcp as tether_mcp  # the optional MCP SDK, imported only when serving

        if http is None:
            principal = Principal(getpass.getuser(), frozenset(scope or ()))
            anyio.run(lambda: tether_mcp.serve_stdio(executor, principal=principal))
            return
        import uvicorn

        host, _, port = http.rpartition(":")
        if not host or not port.isdigit():
            raise UserError(f"--http takes HOST:PORT, e.g. --http 127.0.0.1:8000; got {http!r}.")
        assert tokens is not None
        app = tether_mcp.streamable_http_app(executor, tether_mcp.BearerTokens(tokens), url=f"http://{http}")
        uvicorn.run(app, host=host, port=int(port), log_level="warning")

    app.add_typer(mcp, name="mcp")


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
