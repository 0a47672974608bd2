"""`tether audit tail|show|stats|resolve` over a SQLite journal."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.cli import app
from tether.store import JournalEntry, SqlJournal

runner = CliRunner()

INTENT = JournalEntry(kind="intent", call_id="c1", tool="transfer", created_at=1_700_000_000.0, why="Pay Bob")


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    with SqlJournal(url) as journal:
        search = journal.append(dataclasses.replace(INTENT, call_id="c0", tool="search", why="Find the docs"))
        journal.append(
            dataclasses.replace(
                search,
                kind="result",
                intent_id=search.id,
                outcome="ok",
                envelope={"ok": True},
                duration_ms=12.5,
            )
        )
        journal.append(dataclasses.replace(INTENT))  # never completed: its process is gone
    return url


def test_tail_shows_entries_and_marks_calls_in_doubt(db: str) -> None:
    result = runner.invoke(app, ["audit", "tail", "--db", db])
    assert result.exit_code == 0, result.output
    assert "IN DOUBT" in result.output
    assert "Find the docs" in result.output


def test_tail_as_json(db: str) -> None:
    result = runner.invoke(app, ["audit", "tail", "--db", db, "--json", "-n", "1"])
    (entry,) = json.loads(result.output)
    assert (entry["kind"], entry["call_id"], entry["created"]) == ("intent", "c1", "2023-11-14T22:13:20Z")


def test_show_prints_every_entry_of_a_call(db: str) -> None:
    result = runner.invoke(app, ["audit", "show", "c0", "--db", db])
    assert [e["kind"] for e in json.loads(result.output)] == ["intent", "result"]
    missing = runner.invoke(app, ["audit", "show", "nope", "--db", db])
    assert missing.exit_code == 1


def test_stats_report_seed_002_telemetry(db: str) -> None:
    result = runner.invoke(app, ["audit", "stats", "--db", db, "--json"])
    stats = json.loads(result.output)
    assert (stats["calls"], stats["ok"], stats["success_rate"], stats["in_doubt"]) == (1, 1, 1.0, 1)
    assert stats["tools"]["search"]["p50_ms"] == 12.5
    table = runner.invoke(app, ["audit", "stats", "--db", db])
    assert "success rate 100.0%" in table.output


def test_resolve_settles_a_call_in_doubt(db: str) -> None:
    result = runner.invoke(
        app, ["audit", "resolve", "3", "--db", db, "--data", '"sent"', "--note", "checked"]
    )
    assert result.exit_code == 0, result.output
    with SqlJournal(db) as journal:
        assert journal.in_doubt() == []
        assert journal.lookup("none").status == "new"
        assert journal.entries()[-1].envelope == {"ok": True, "data": "sent"}
    again = runner.invoke(app, ["audit", "resolve", "3", "--db", db, "--not-run"])
    assert again.exit_code == 1


def test_a_missing_journal_is_an_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", "tail", "--db", f"sqlite:///{tmp_path / 'none.db'}"])
    assert result.exit_code == 2


def test_entries_holding_a_lone_surrogate_are_shown_not_crashed_on(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    with SqlJournal(url) as journal:  # the JSON columns keep `\ud800` escaped, as any JSON writer may
        journal.append(
            dataclasses.replace(
                INTENT, arguments={"path": "notes\ud800.md"}, envelope={"ok": True, "data": "\udcff"}
            )
        )
    for command in (["tail", "--json"], ["show", "c1"], ["tail"]):
        result = runner.invoke(app, ["audit", *command, "--db", url])
        assert result.exit_code == 0, result.output
        assert "notes\ufffd.md" in result.output or command == ["tail"]
