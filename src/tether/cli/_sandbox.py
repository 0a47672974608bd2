"""`tether sandbox check`: what this machine gives the code-running tools' sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from tether.cli._errors import console as plain_console
from tether.sandbox import check_host

__all__ = ["register"]

_MARK = {True: Text("yes", "green"), False: Text("no", "red"), None: Text("-", "dim")}


def register(app: typer.Typer) -> None:
    sandbox = typer.Typer(help="The OS sandbox of the code-running tools.", no_args_is_help=True)

    @sandbox.command("check")
    def check(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        workspace: Annotated[
            Path | None, typer.Option(help="The workspace to check idmapping on (default: here).")
        ] = None,
    ) -> None:
        """Probe each isolation mechanism on this machine and say what it protects.

        Exits 1 if code cannot run sandboxed here at all."""
        checks = check_host(workspace)
        table = Table("mechanism", "works", "here")
        for item in checks:
            table.add_row(Text(item.name), _MARK[item.ok], Text(item.detail))
        console = plain_console()
        console.print(table)
        broken = [c.name for c in checks if c.essential and not c.ok]
        degraded = [c.name for c in checks if not c.essential and c.ok is False]
        if broken:
            console.print(
                Text.assemble(("code cannot run sandboxed here", "bold red"), f" ({', '.join(broken)}).")
            )
            raise typer.Exit(1)
        if degraded:
            console.print(
                Text.assemble(
                    ("sandboxed, with less isolation", "yellow"),
                    f" ({', '.join(degraded)}): see docs/sandbox.md.",
                )
            )
        else:
            console.print(Text("sandboxed, every mechanism available.", "green"))

    app.add_typer(sandbox, name="sandbox")
