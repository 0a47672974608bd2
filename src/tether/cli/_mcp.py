"""`tether mcp serve`: tools from any source served to MCP clients, every call through tether's guards."""

from __future__ import annotations

import getpass
from typing import Annotated

import anyio
import typer

from tether.cli._journal import open_journal
from tether.cli._run import JournalOption, McpOption, McpUrlOption, PackOption, RootOption, agent_tools
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
    ) -> None:
        """Serve tools to an MCP client on stdin/stdout: validation, `why`, scopes, idempotency and the
        journal apply to every call, and refusals reach the client as tool errors carrying the envelope.

        The client runs this command itself, e.g. in its config: tether mcp serve --pack fs tools.py
        """
        toolset = agent_tools(sources or [], pack or [], root or [], mcp=mcp, mcp_urls=mcp_url)
        executor = Executor(toolset, journal=open_journal(journal, existing=False) if journal else None)
        principal = Principal(getpass.getuser(), frozenset(scope or ()))

        from tether.mcp import serve_stdio  # the optional MCP SDK, imported only when serving

        anyio.run(lambda: serve_stdio(executor, principal=principal))

    app.add_typer(mcp, name="mcp")
