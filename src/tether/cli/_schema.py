from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tether.cli._errors import console
from tether.exceptions import UserError
from tether.schemas import export_schemas

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    schema = typer.Typer(help="The versioned JSON Schemas of tether's wire formats.", no_args_is_help=True)

    @schema.command("export")
    def export(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        directory: Annotated[str, typer.Argument(help="Where to write the *.vN.json files.")],
    ) -> None:
        """Write tool_call.v1.json, envelope.v1.json, ... generated from tether's models."""
        if not directory.strip():
            raise UserError("Give the folder to write the schemas to, e.g. `tether schema export schemas`.")
        try:
            written = export_schemas(Path(directory))
        except OSError as e:
            raise UserError(f"Cannot write the schemas to {directory}: {e.strerror or e}.") from e
        out = console()
        for path in written:
            out.print(f"wrote {path}")

    app.add_typer(schema, name="schema")
