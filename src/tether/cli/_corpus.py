"""`tether corpus`: per-file pass rates of the dialects over the shared corpora."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from tether.cli._corpus_runner import FileReport, corpus_files, load_exclusions, run_file
from tether.cli._errors import console as plain_console
from tether.exceptions import UserError

__all__ = ["register"]

_DEFAULT = Path("..") / "shared" / "corpora"
_COLUMNS = ("file", "dialect", "cases", "labeled", "exact", "exact %", "content", "stream", "excluded")


def _percent(exact: int, labeled: int) -> str:
    return f"{100 * exact / labeled:.1f}" if labeled else "-"


def register(app: typer.Typer) -> None:
    @app.command("corpus")
    def corpus_command(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        directory: Annotated[
            Path, typer.Argument(help="The corpora folder, or one corpus file (*.jsonl).")
        ] = _DEFAULT,
        files: Annotated[
            list[str] | None, typer.Option("--file", "-f", help="Only these files (stems).")
        ] = None,
        mislabeled: Annotated[
            Path | None,
            typer.Option(
                help="JSON list of {file, line, reason} cases judged mislabeled, excluded from the counts "
                "(tether's own: tests/dialects/mislabeled.json). Without it no case is excluded."
            ),
        ] = None,
        failures: Annotated[int, typer.Option(help="Show up to this many failing cases per file.")] = 0,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines instead of a table.")] = False,
    ) -> None:
        """Run every corpus case through its dialect: exact call matches, content and streaming per file.

        `labeled` counts the cases with an expectation that are not excluded; `exact %` is exact of labeled.
        """
        paths = _chosen(directory, files or [])
        if mislabeled is not None and not mislabeled.is_file():
            raise UserError(f"No exclusions file at {mislabeled}.")
        exclusions: dict[tuple[str, int], str] = {}
        content_only: frozenset[tuple[str, int]] = frozenset()
        if mislabeled is not None:
            exclusions, content_only = load_exclusions(mislabeled)
        console = plain_console()
        table = Table(*_COLUMNS)
        total = FileReport("total", None)
        for path in paths:
            report = run_file(path, exclusions=exclusions, content_only=content_only)
            for name in ("cases", "labeled", "exact", "content_cases", "content_ok", "stream_ok", "excluded"):
                setattr(total, name, getattr(total, name) + getattr(report, name))
            row = report.as_dict()
            if as_json:
                typer.echo(json.dumps(row))
            else:
                table.add_row(*_cells(row, report))
            for f in report.failures[:failures]:
                console.print(f"  {path.name}:{f.line} {f.what}: {f.text[:160]!r} {f.detail[:200]}")
        if as_json:
            typer.echo(json.dumps(total.as_dict()))
            return
        table.add_section()
        table.add_row(*_cells(total.as_dict(), total))
        console.print(table)
        source = f"listed in {mislabeled}" if mislabeled is not None else "none: no --mislabeled file given"
        console.print(
            f"{total.labeled} labeled cases (expectation known, not excluded), {total.exact} exact "
            f"({_percent(total.exact, total.labeled)}%); {total.excluded} excluded as mislabeled ({source})."
        )


def _chosen(directory: Path, stems: list[str]) -> list[Path]:
    """The corpus files to run: one file, or a folder's (only `stems`, each of which must be there)."""
    if directory.is_file() and directory.suffix == ".jsonl":
        return [directory]
    if not directory.is_dir():
        raise UserError(
            f"No corpora folder at {directory}: pass the folder of *.jsonl corpus files, or one of them."
        )
    paths = corpus_files(directory)
    known = {p.stem for p in paths}
    if missing := [s for s in stems if s not in known]:
        raise UserError(
            f"No corpus file named {', '.join(missing)} in {directory} (--file takes a file's stem); "
            f"there are: {', '.join(sorted(known)) or 'none'}."
        )
    return [p for p in paths if not stems or p.stem in stems]


def _cells(row: dict[str, object], report: FileReport) -> list[str]:
    row = {**row, "exact %": _percent(report.exact, report.labeled), "dialect": row["dialect"] or "-"}
    return [str(row[k]) for k in _COLUMNS]
