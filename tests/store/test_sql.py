"""`SqlJournal` on SQLite and PostgreSQL: append-only entries, lookups, in-doubt intents, restarts."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import inspect, text

from tether.exceptions import ToolError
from tether.execution import Executor, Run
from tether.store import JournalEntry, Lookup, SqlJournal
from tether.tools import Toolset, tool
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

OpenJournal = Callable[[str], SqlJournal]


def intent(**changes: Any) -> JournalEntry:
    """A fresh intent entry (appending sets `id` on the entry itself)."""
    entry = JournalEntry(
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
    return dataclasses.replace(entry, **changes)


runs = 0


@tool
def write_note(text: str) -> str:
    global runs
    runs += 1
    return f"saved {len(text)} characters"


def test_entries_round_trip_with_ids_in_append_order(journal_url: str, open_journal: OpenJournal) -> None:
    journal = open_journal(journal_url)
    first = journal.append(intent())
    result = journal.append(intent(kind="result", intent_id=first.id, outcome="ok", envelope={"ok": True}))
    assert first == intent(id=first.id)
    assert journal.entries() == [first, result]
    assert journal.entries(limit=1) == [result]
    assert journal.entries(call_id="other") == []
    assert journal.entries(since_id=first.id) == [result]
    assert journal.entry(result.id or 0) == result


def test_lookup_reports_new_in_doubt_and_done(journal_url: str, open_journal: OpenJournal) -> None:
    journal = open_journal(journal_url)
    assert journal.lookup("k1") == Lookup("new")
    first = journal.append(intent())
    assert journal.lookup("k1") == Lookup("in_doubt", first)
    assert journal.in_doubt() == [first]
    journal.append(intent(kind="result", intent_id=first.id, envelope={"ok": True, "data": 1}))
    assert journal.lookup("k1") == Lookup("done", first, {"ok": True, "data": 1})
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


def test_a_new_sqlite_journal_has_2_kb_pages_and_an_older_file_keeps_its_own(
    tmp_path: Path, open_journal: OpenJournal
) -> None:
    """Each page a commit changes is a WAL frame: 2 KB ones cost less a call. A file made before keeps its
    4 KB pages (SQLite cannot change a WAL file's), and works as before."""
    new = open_journal(f"sqlite:///{tmp_path / 'new.db'}")
    older = tmp_path / "older.db"
    with sqlite3.connect(older) as made:  # as SQLite's default made it
        made.execute("CREATE TABLE kept (a)")
    old = open_journal(f"sqlite:///{older}")
    for journal, size in ((new, 2048), (old, 4096)):
        with journal.engine.connect() as connection:
            assert connection.execute(text("PRAGMA page_size")).scalar() == size
            assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        big = {"text": "x" * 10_000}  # spills over several pages either way
        claimed = JournalEntry("intent", "c1", "add", 1.0, idempotency_key="k", arguments=big)
        assert journal.claim(claimed, wait=False).status == "new"
        assert journal.entries() == [claimed]


def test_claims_of_one_key_from_many_connections_let_exactly_one_through(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journals = [open_journal(journal_url) for _ in range(4)]
    intents = [intent(call_id=f"c{i}") for i in range(8)]

    def claim(i: int) -> None:
        journals[i % 4].claim(intents[i])

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(claim, range(8)))
    assert sum(entry.id is not None for entry in intents) == 1
    assert len(journals[0].entries()) == 1


def test_a_claim_on_an_intent_in_doubt_goes_through_only_if_not_mutating(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    first = journal.append(intent())
    mutating = intent(call_id="again")
    assert journal.claim(mutating) == Lookup("in_doubt", first)
    assert mutating.id is None
    read_only = intent(call_id="again", side_effects="none")
    assert journal.claim(read_only).status == "in_doubt"
    assert read_only.id is not None


async def test_a_duplicate_in_another_executor_on_the_same_journal_gets_conflict(
    journal_url: str, open_journal: OpenJournal
) -> None:
    started, release = anyio.Event(), anyio.Event()

    @tool
    async def booking(room: str) -> str:
        started.set()
        await release.wait()
        return f"booked {room}"

    first, second = (Executor(Toolset(booking), journal=open_journal(journal_url)) for _ in range(2))
    call = ToolCall(id="c1", name="booking", arguments={"room": "Blue"})
    booked: list[object] = []

    async def book() -> None:
        booked.append(await first.execute(call, Run(session_id="s")))

    async def repeat_once_started() -> object:
        await started.wait()
        try:
            return await second.execute(call, Run(session_id="s"))
        finally:
            release.set()

    conflict: object = None
    async with anyio.create_task_group() as group:
        group.start_soon(book)
        conflict = await repeat_once_started()
    assert booked == [OkEnvelope(data="booked Blue")]
    assert isinstance(conflict, ErrorEnvelope)
    assert (
        conflict.error.message
        == f"Duplicate call to booking: the same call is running in process {os.getpid()}."
    )


@tool
async def slow_booking(room: str) -> str:
    await anyio.sleep(0.5)
    return f"booked {room}"


async def test_many_concurrent_calls_share_one_journal(journal_url: str, open_journal: OpenJournal) -> None:
    executor = Executor(Toolset(slow_booking), journal=open_journal(journal_url))
    calls = [ToolCall(id=f"c{i}", name="slow_booking", arguments={"room": f"R{i}"}) for i in range(20)]
    results = await executor.execute_all(calls, Run(session_id="s"))
    assert results == [OkEnvelope(data=f"booked R{i}") for i in range(20)]
    entries = executor.journal.entries()
    assert sorted(e.kind for e in entries) == ["intent"] * 20 + ["result"] * 20
    assert {e.intent_id for e in entries if e.kind == "result"} == {
        e.id for e in entries if e.kind == "intent"
    }
    assert await executor.in_doubt() == []


@tool
def awkward(kind: str) -> object:
    """Fails or answers with what JSON, PostgreSQL or Python's int -> str cannot hold as it is."""
    if kind == "surrogate":
        raise ToolError("NOT_FOUND", "no file named a\ud800b")
    if kind == "nul":
        raise ToolError("NOT_FOUND", "no file named a\x00b")
    if kind == "crash":
        raise ValueError("bad byte \x00 and half a pair \udcff")
    if kind == "huge":
        return 10**5000
    return {"ratio": float("nan"), "name\x00": "x\udcff"}


@pytest.mark.parametrize("kind", ["surrogate", "nul", "crash", "huge", "odd_data"])
async def test_a_result_no_journal_could_hold_is_made_storable_and_retries_are_answered(
    kind: str, journal_url: str, open_journal: OpenJournal
) -> None:
    executor = Executor(Toolset(awkward), journal=open_journal(journal_url))
    call = ToolCall(id="c\x00", name="awkward", arguments={"kind": kind}, why="Check \x00 the \ud800 file")
    first = await executor.execute(call, Run(session_id="s"))
    again = await executor.execute(call, Run(session_id="s"))
    assert await executor.in_doubt() == []
    assert first.model_dump_json()  # sendable to a model as it is
    assert not (isinstance(again, ErrorEnvelope) and again.error.code == "CONFLICT")
    results = [e for e in executor.journal.entries() if e.kind == "result"]
    assert results[0].envelope == first.model_dump(mode="json")
    if kind == "odd_data":
        assert first == OkEnvelope(data={"ratio": None, "name\ufffd": "x\ufffd"})
    elif kind != "crash":
        assert first == again


async def test_a_resolution_an_operator_wrote_with_nan_is_stored_as_null(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    executor = Executor(Toolset(write_note), journal=journal)
    left = journal.append(intent())
    await executor.resolve(
        left, envelope=OkEnvelope(data={"balance": float("nan")}), note="checked \x00 by hand"
    )
    assert journal.lookup("k1") == Lookup("done", left, {"ok": True, "data": {"balance": None}})


def test_a_calls_entries_are_found_by_its_id_through_its_intents(
    journal_url: str, open_journal: OpenJournal
) -> None:
    # only entries that start a call are indexed by call id; results and resolutions are found through them
    journal = open_journal(journal_url)
    first = journal.append(intent())
    other = journal.append(intent(call_id="c2", idempotency_key="k2"))
    result = journal.append(intent(kind="result", intent_id=first.id, envelope={"ok": True}))
    journal.append(intent(kind="result", call_id="c2", intent_id=other.id, envelope={"ok": True}))
    refusal = journal.append(intent(kind="refusal", idempotency_key=None))
    assert journal.entries(call_id="c1") == [first, result, refusal]
    assert journal.entries(call_id="c1", limit=2) == [result, refusal]
    assert journal.entries(call_id="c1", since_id=first.id) == [result, refusal]


def test_a_journal_made_by_an_earlier_version_gets_its_partial_indexes(
    journal_url: str, open_journal: OpenJournal
) -> None:
    open_journal(journal_url).close()
    engine = open_journal(journal_url).engine
    with engine.begin() as connection:  # as version 0.1.0 made them
        for name in ("ix_tether_journal_intents", "ix_tether_journal_completions", "ix_tether_journal_calls"):
            connection.execute(text(f"DROP INDEX {name}"))
        connection.execute(text("CREATE INDEX ix_tether_journal_key ON tether_journal (idempotency_key, id)"))
        connection.execute(text("CREATE INDEX ix_tether_journal_intent ON tether_journal (intent_id)"))
        connection.execute(text("CREATE INDEX ix_tether_journal_call ON tether_journal (call_id)"))
    reopened = open_journal(journal_url)
    assert {i["name"] for i in inspect(reopened.engine).get_indexes("tether_journal")} == {
        "ix_tether_journal_intents",
        "ix_tether_journal_completions",
        "ix_tether_journal_calls",
    }
