"""`tether sandbox check`: what this machine gives the code-running tools' sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from tether.sandbox import check_host

__all__ = ["register"]

_MARK = {True: "[green]yes[/]", False: "[red]no[/]", None: "[dim]-[/]"}


def register(app: typer.Typer) -> None:
    sandbox = typer.Typer(help="The OS sandbox of the code-running tools.", no_args_is_help=True)

    @sandbox.command("check")
    def check(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        workspace: Annotated[
            Path | None, typer.Option(help="The workspace to check idmapping on (default: here).")
        ] = None,
    ) -> None:
        """Probe each isolation mechanism on this machine and say what it protects; exit 1 if code
        cannot run sandboxed here at all."""
        checks = check_host(workspace)
        table = Table("mechanism", "works", "here")
        for item in checks:
            table.add_row(item.name, _MARK[item.ok], item.detail)
        console = Console()
        console.print(table)
        broken = [c.name for c in checks if c.essential and not c.ok]
        degraded = [c.name for c in checks if not c.essential and c.ok is False]
        if broken:
            console.print(
                f"[bold red]code cannot run sandboxed here[/] ({', '.join(broken)}).", highlight=False
            )
            raise typer.Exit(1)
        if degraded:
            console.print(
                f"[yellow]sandboxed, with less isolation[/] ({', '.join(degraded)}): see docs/sandbox.md.",
                highlight=False,
            )
        else:
            console.print("[green]sandboxed, every mechanism available[/].", highlight=False)

    app.add_typer(sandbox, name="sandbox")
