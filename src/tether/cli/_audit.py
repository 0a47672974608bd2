"""`tether audit`: read the journal — recent calls, one call in full, statistics — and resolve calls in doubt."""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from tether.cli._errors import console, fail
from tether.cli._journal import URL_FORMS, open_journal
from tether.store import DEFAULT_URL, JournalEntry, compute_stats
from tether.store.internal import resolution, storable, writer_alive

__all__ = ["register"]

Db = Annotated[
    str,
    typer.Option(
        "--db",
        envvar="TETHER_JOURNAL_URL",
        help=f"The journal's URL: {URL_FORMS}.",
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def register(app: typer.Typer) -> None:
    audit = typer.Typer(help="Read the audit journal of tool calls.", no_args_is_help=True)

    @audit.command("tail")
    def tail(  # pyright: ignore[reportUnusedFunction]
        db: Db = DEFAULT_URL,
        lines: Annotated[int, typer.Option("-n", "--lines", help="How many entries.")] = 20,
        as_json: AsJson = False,
    ) -> None:
        """The latest entries, oldest first; intents without a result are shown as running or IN DOUBT."""
        with open_journal(db, existing=True) as journal:
            entries = journal.entries(limit=lines)
            doubtful = {e.id for e in journal.in_doubt()}
        if as_json:
            typer.echo(json.dumps([_json(e) for e in entries], indent=2, ensure_ascii=False))
            return
        table = Table("id", "time", "state", "tool", "call", "principal", "result", "ms", "why", box=None)
        for e in entries:
            state = Text(e.kind)
            if e.id in doubtful:
                state = Text("running", "yellow") if writer_alive(e) else Text("IN DOUBT", "bold red")
            result = e.error_code or e.outcome or ""
            ms = f"{e.duration_ms:.1f}" if e.duration_ms is not None else ""
            table.add_row(
                str(e.id),
                _time(e.created_at, "%H:%M:%S"),
                state,
                e.tool,
                e.call_id,
                e.principal or "",
                result,
                ms,
                e.why or "",
            )
        console().print(table)

    @audit.command("show")
    def show(  # pyright: ignore[reportUnusedFunction]
        call: Annotated[str, typer.Argument(help="A call id, or a journal entry id.")],
        db: Db = DEFAULT_URL,
    ) -> None:
        """Every entry of one call, in full (arguments redacted; tracebacks included), as JSON."""
        with open_journal(db, existing=True) as journal:
            entries = journal.entries(call_id=call)
            if not entries and call.isdigit() and (found := journal.entry(int(call))) is not None:
                entries = [found]
        if not entries:
            fail(f"no call or entry {call!r} in the journal", code=1)
        typer.echo(json.dumps([_json(e) for e in entries], indent=2, ensure_ascii=False))

    @audit.command("stats")
    def stats(db: Db = DEFAULT_URL, as_json: AsJson = False) -> None:  # pyright: ignore[reportUnusedFunction]
        """Calls, success rate, needs loops, failure reasons, p50/p95 duration per tool (seed 002)."""
        with open_journal(db, existing=True) as journal:
            summary = compute_stats(journal.entries())
        if as_json:
            out = dataclasses.asdict(summary) | {"success_rate": summary.success_rate}
            typer.echo(json.dumps(out, indent=2))
            return
        out = console()
        rate = f"{summary.success_rate:.1%}" if summary.success_rate is not None else "-"
        out.print(
            f"calls {summary.calls}  ok {summary.ok}  success rate {rate}  needs {summary.needs} "
            f"(resolved {summary.needs_resolved})  refused {summary.refused}  in doubt {summary.in_doubt}"
        )
        if summary.failure_reasons:
            out.print("failure reasons: " + ", ".join(f"{k} {v}" for k, v in summary.failure_reasons.items()))
        table = Table("tool", "calls", "ok", "needs", "errors", "p50 ms", "p95 ms", box=None)
        for name, t in summary.tools.items():
            table.add_row(
                name, str(t.calls), str(t.ok), str(t.needs), str(t.errors), _ms(t.p50_ms), _ms(t.p95_ms)
            )
        out.print(table)

    @audit.command("resolve")
    def resolve(  # pyright: ignore[reportUnusedFunction]
        entry_id: Annotated[int, typer.Argument(help="The journal id of the intent in doubt.")],
        db: Db = DEFAULT_URL,
        not_run: Annotated[
            bool, typer.Option("--not-run", help="It did not take effect: it may run again.")
        ] = False,
        data: Annotated[
            str | None, typer.Option("--data", help="It took effect; this JSON is its result for repeats.")
        ] = None,
        note: Annotated[str, typer.Option(help="Why you resolved it so (kept in the journal).")] = "",
    ) -> None:
        """Settle a call left in doubt by a crash, so that its repeats are answered (or it may run again)."""
        if not_run == (data is not None):
            fail("give exactly one of --not-run and --data JSON")
        try:
            result = None if data is None else json.loads(data)
        except json.JSONDecodeError as e:
            fail(f"--data must be JSON (a string in quotes: '\"sent\"'): {e}")
        with open_journal(db, existing=True) as journal:
            intent = journal.entry(entry_id)
            if (
                intent is None
                or intent.kind != "intent"
                or intent.id not in {e.id for e in journal.in_doubt()}
            ):
                fail(f"entry {entry_id} is not an intent in doubt", code=1)
            envelope = None if data is None else {"ok": True, "data": result}
            journal.append(resolution(intent, envelope=envelope, note=note))
        typer.echo(f"resolved entry {entry_id}")

    app.add_typer(audit, name="audit")


def _json(entry: JournalEntry) -> dict[str, Any]:
    """The entry as JSON a terminal can print: JSON columns may hold a lone surrogate (escaped in the JSON text)."""
    return storable(dataclasses.asdict(entry)) | {"created": _time(entry.created_at)}


def _time(stamp: float, form: str = "%Y-%m-%dT%H:%M:%SZ") -> str:
    return time.strftime(form, time.gmtime(stamp))


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"
