"""`tether corpus`: per-file pass rates of the dialects over the shared corpora."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from tether.dialects._corpus import corpus_files, load_exclusions, run_file

__all__ = ["register"]

_DEFAULT = Path("..") / "shared" / "corpora"


def register(app: typer.Typer) -> None:
    @app.command("corpus")
    def corpus_command(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        directory: Annotated[Path, typer.Argument(help="The corpora folder.")] = _DEFAULT,
        files: Annotated[
            list[str] | None, typer.Option("--file", "-f", help="Only these files (stems).")
        ] = None,
        mislabeled: Annotated[
            Path | None, typer.Option(help="JSON list of {file, line, reason} cases to exclude.")
        ] = None,
        failures: Annotated[int, typer.Option(help="Show up to this many failing cases per file.")] = 0,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines instead of a table.")] = False,
    ) -> None:
        """Run every corpus case through its dialect: exact call matches, content and streaming per file."""
        exclusions: dict[tuple[str, int], str] = {}
        content_only: frozenset[tuple[str, int]] = frozenset()
        if mislabeled is not None:
            exclusions, content_only = load_exclusions(mislabeled)
        console = Console()
        table = Table("file", "dialect", "cases", "labeled", "exact", "content", "stream", "excluded")
        for path in corpus_files(directory):
            if files and path.stem not in files:
                continue
            report = run_file(path, exclusions=exclusions, content_only=content_only)
            row = report.as_dict()
            if as_json:
                typer.echo(json.dumps(row))
            else:
                table.add_row(
                    *(
                        str(row[k])
                        for k in (
                            "file",
                            "dialect",
                            "cases",
                            "labeled",
                            "exact",
                            "content",
                            "stream",
                            "excluded",
                        )
                    )
                )
            for f in report.failures[:failures]:
                console.print(
                    f"  {path.name}:{f.line} {f.what}: {f.text[:160]!r} {f.detail[:200]}", highlight=False
                )
        if not as_json:
            console.print(table)
