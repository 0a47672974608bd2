"""`SqlJournal` on SQLite and PostgreSQL: append-only entries, lookups, in-doubt intents, restarts."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import text

from tether.execution import Executor, Run
from tether.store import JournalEntry, Lookup, SqlJournal
from tether.tools import Toolset, tool
from tether.types import OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

OpenJournal = Callable[[str], SqlJournal]

INTENT = JournalEntry(
    kind="intent",
    call_id="c1",
    tool="fs.write",
    created_at=1_700_000_000.0,
    session_id="s1",
    idempotency_key="k1",
    side_effects="mutating",
    principal="u1",
    why="Save the user's notes",
    arguments={"path": "notes.md", "nested": {"list": [1, 2]}},
    annotations=("# part of the notes task",),
    repairs=({"kind": "trailing_comma", "message": "removed", "path": None},),
    repaired=True,
    pid=123,
    host="h",
)

runs = 0


@tool
def write_note(text: str) -> str:
    global runs
    runs += 1
    return f"saved {len(text)} characters"


def test_entries_round_trip_with_ids_in_append_order(journal_url: str, open_journal: OpenJournal) -> None:
    journal = open_journal(journal_url)
    intent = journal.append(INTENT)
    result = journal.append(
        dataclasses.replace(INTENT, kind="result", intent_id=intent.id, outcome="ok", envelope={"ok": True})
    )
    assert intent == dataclasses.replace(INTENT, id=intent.id)
    assert journal.entries() == [intent, result]
    assert journal.entries(limit=1) == [result]
    assert journal.entries(call_id="other") == []
    assert journal.entries(since_id=intent.id) == [result]
    assert journal.entry(result.id or 0) == result


def test_lookup_reports_new_in_doubt_and_done(journal_url: str, open_journal: OpenJournal) -> None:
    journal = open_journal(journal_url)
    assert journal.lookup("k1") == Lookup("new")
    intent = journal.append(INTENT)
    assert journal.lookup("k1") == Lookup("in_doubt", intent)
    assert journal.in_doubt() == [intent]
    journal.append(
        dataclasses.replace(INTENT, kind="result", intent_id=intent.id, envelope={"ok": True, "data": 1})
    )
    assert journal.lookup("k1") == Lookup("done", intent, {"ok": True, "data": 1})
    assert journal.in_doubt() == []


async def test_a_restarted_executor_replays_completed_calls_from_the_journal(
    journal_url: str, open_journal: OpenJournal
) -> None:
    global runs
    runs = 0
    call = ToolCall(id="c1", name="write_note", arguments={"text": "hello"})
    first = await Executor(Toolset(write_note), journal=open_journal(journal_url)).execute(
        call, Run(session_id="s")
    )
    restarted = Executor(Toolset(write_note), journal=open_journal(journal_url))
    again = await restarted.execute(call, Run(session_id="s"))
    assert first == again == OkEnvelope(data="saved 5 characters")
    assert runs == 1
    assert [e.kind for e in restarted.journal.entries()] == ["intent", "result"]


def test_sqlite_journals_use_wal(tmp_path: Path, open_journal: OpenJournal) -> None:
    journal = open_journal(f"sqlite:///{tmp_path / 'j.db'}")
    with journal.engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL
