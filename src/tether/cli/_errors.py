from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from tether.exceptions import UserError

__all__ = ["stderr", "user_errors"]

stderr = Console(stderr=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Show a `UserError` as one red line and exit 2, instead of a traceback."""
    try:
        yield
    except UserError as e:
        stderr.print(f"[bold red]error:[/] {e}", highlight=False)
        raise typer.Exit(2) from e
