"""Writes on the caller's thread: committed at once when nobody else writes, never waiting when someone does."""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from tether.execution import Executor, Principal, Run
from tether.store import JournalEntry, SqlJournal, TokenBucket, WouldWait
from tether.store.internal import RateToken
from tether.tools import Toolset, tool
from tether.types import RateLimit, ToolCall

OpenJournal = Callable[[str], SqlJournal]


def entry(call_id: str, kind: Any = "intent") -> JournalEntry:
    return JournalEntry(
        kind=kind, call_id=call_id, tool="add", created_at=time.time(), idempotency_key=call_id
    )


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'journal.db'}"


@pytest.fixture
def held(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """Another connection to the file, as another process would hold it (the journal must exist first)."""
    connection = sqlite3.connect(tmp_path / "journal.db", isolation_level=None, check_same_thread=False)
    yield connection
    connection.close()


def test_a_write_that_needs_no_wait_commits_before_it_returns(url: str, open_journal: OpenJournal) -> None:
    journal = open_journal(url)
    assert journal.inline
    written = journal.append(entry("c1"), wait=False)
    assert written.id is not None
    assert [e.call_id for e in open_journal(url).entries()] == ["c1"]  # another connection sees it


def test_a_write_that_would_wait_writes_nothing_and_says_so(
    url: str, open_journal: OpenJournal, held: sqlite3.Connection
) -> None:
    journal = open_journal(url)
    buckets = journal.rate_limits  # its table is made on first use
    held.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    with pytest.raises(WouldWait):
        journal.append(entry("c1"), wait=False)
    with pytest.raises(WouldWait):
        journal.claim(entry("c2"), wait=False)
    with pytest.raises(WouldWait):
        buckets.take("add", RateLimit(calls=5, per_seconds=1), wait=False)
    held.execute("ROLLBACK")
    assert journal.entries() == []
    assert journal.claim(entry("c2"), wait=False).status == "new"
    assert [e.call_id for e in journal.entries()] == ["c2"]


def test_a_durable_journal_never_writes_on_the_callers_thread(url: str, open_journal: OpenJournal) -> None:
    # synchronous=FULL fsyncs every commit: that must not block an event loop
    journal = SqlJournal(url, durable=True)
    try:
        assert not journal.inline
        with pytest.raises(WouldWait):
            journal.append(entry("c1"), wait=False)
    finally:
        journal.close()


@tool(side_effects="idempotent", rate_limit=RateLimit(calls=1000, per_seconds=1), scopes=("math",))
async def add(a: int, b: int) -> int:
    return a + b


CALLER = Run(principal=Principal("u1", frozenset({"math"})), session_id="s")


@pytest.mark.anyio
async def test_an_uncontended_call_makes_no_thread_hop(
    url: str, open_journal: OpenJournal, monkeypatch: pytest.MonkeyPatch
) -> None:
    hops: list[object] = []
    real = anyio.to_thread.run_sync

    async def counted(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(function)
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    journal = open_journal(url)
    executor = Executor(Toolset(add), journal=journal)
    envelope = await executor.execute(ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3}), CALLER)
    assert envelope.ok
    assert hops == []  # rate-limit token, claim (intent) and result all committed inline
    assert [(e.kind, e.outcome) for e in journal.entries()] == [("intent", None), ("result", "ok")]


@pytest.mark.anyio
async def test_a_call_while_another_process_writes_waits_in_a_thread_and_is_recorded(
    url: str, open_journal: OpenJournal, held: sqlite3.Connection
) -> None:
    journal = open_journal(url)
    executor = Executor(Toolset(add), journal=journal)
    await executor.execute(ToolCall(id="c0", name="add", arguments={"a": 1, "b": 1}), CALLER)  # tables exist
    held.execute("BEGIN IMMEDIATE")
    threading.Timer(0.3, lambda: held.execute("COMMIT")).start()
    started = time.monotonic()
    envelope = await executor.execute(ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3}), CALLER)
    assert envelope.ok
    assert time.monotonic() - started >= 0.25  # it waited for the lock (in a thread), then wrote
    kinds = [(e.call_id, e.kind) for e in journal.entries()]
    assert kinds == [("c0", "intent"), ("c0", "result"), ("c1", "intent"), ("c1", "result")]


def test_every_column_written_on_the_callers_thread_reads_back_as_written(
    url: str, open_journal: OpenJournal
) -> None:
    """The writer binds an entry's values by position: each field must land in its own column."""
    full = JournalEntry(
        kind="result",
        call_id="c1",
        tool="add",
        created_at=1_700_000_000.5,
        intent_id=7,
        session_id="s1",
        run_id="r1",
        idempotency_key="k1",
        side_effects="idempotent",
        principal="u1",
        why="Add the subtotals",
        arguments={"a": 1, "nested": {"b": [2, 3]}},
        annotations=("# a note",),
        repairs=({"kind": "trailing_comma", "message": "removed", "path": None},),
        repaired=True,
        outcome="error",
        error_code="INTERNAL",
        envelope={"ok": False, "error": {"code": "INTERNAL"}},
        duration_ms=1.25,
        traceback="Traceback ...",
        pid=42,
        host="h1",
        note="resolved by hand",
        extra={"x": 1},
    )
    journal = open_journal(url)
    written = journal.append(full, wait=False)
    claimed = dataclasses.replace(full, kind="intent", id=None, intent_id=None, idempotency_key="k2")
    assert journal.claim(claimed, wait=False).status == "new"
    assert open_journal(url).entries() == [written, claimed]


@pytest.mark.parametrize(
    "nulls",
    [
        ("intent_id", "outcome", "error_code", "duration_ms", "traceback", "note"),  # an intent's
        ("error_code", "traceback", "note"),  # a result's
        ("session_id", "idempotency_key", "principal", "why"),  # a call without them
        ("run_id", "side_effects", "pid", "host"),  # None elsewhere: bound as a parameter
        ("session_id", "run_id", "why", "note", "pid"),  # both at once
    ],
)
def test_columns_left_out_of_an_insert_read_back_as_none(
    url: str, open_journal: OpenJournal, nulls: tuple[str, ...]
) -> None:
    """The writer leaves the columns that are often None out of its `INSERT` (they get NULL without a bound
    parameter): an entry with any of them None reads back as written, whichever statement wrote it, and the
    values of the columns kept land in their own columns."""
    full = JournalEntry(
        kind="result", call_id="c1", tool="add", created_at=1_700_000_000.5, intent_id=7, session_id="s1",
        run_id="r1", idempotency_key="k1", side_effects="idempotent", principal="u1", why="Add them",
        arguments={"a": 1}, outcome="ok", error_code="E", envelope={"ok": True, "data": 3}, duration_ms=1.25,
        traceback="Traceback ...", pid=42, host="h1", note="a note", extra={"x": 1},
    )  # fmt: skip
    some = dataclasses.replace(full, **dict.fromkeys(nulls))
    journal = open_journal(url)
    journal.rate_limits  # noqa: B018 (its table is made on first use)
    appended = journal.append(some, wait=False)
    claimed = dataclasses.replace(some, kind="intent", id=None, intent_id=None, idempotency_key="k2")
    assert journal.claim(claimed, wait=False).status == "new"
    taken = dataclasses.replace(claimed, id=None, call_id="c3", idempotency_key="k3")
    take = RateToken("add", RateLimit(calls=5, per_seconds=3600))
    assert journal.claim(taken, wait=False, take=take).status == "new"
    written = [appended, claimed, taken]
    assert open_journal(url).entries() == written
    assert all(getattr(e, name) is None for e in written[:2] for name in nulls if name != "idempotency_key")


def test_a_tokens_statement_computes_what_a_token_bucket_does(url: str, open_journal: OpenJournal) -> None:
    """The writer takes a token in one `UPDATE` whose refill is SQL (its values bound by position): each take,
    refused or not, must answer as `TokenBucket` does at the same moments."""
    writer: Any = getattr(open_journal(url), "_writer")  # noqa: B009 (the SQLite writer, to pass `now`)
    open_journal(url).rate_limits  # noqa: B018 (its table is made on first use)
    limit = RateLimit(calls=3, per_seconds=10)
    bucket = TokenBucket(limit, float(limit.calls), 1000.0)
    for now in (1000.0, 1000.0, 1000.0, 1000.0, 1001.5, 1004.0, 1004.0, 1004.0, 1030.0, 1030.0):
        assert writer.take("k", limit, now, wait=False) == pytest.approx(bucket.take(now))


def test_a_claim_on_the_callers_thread_probes_the_keys_index_and_copies_nothing(
    url: str, open_journal: OpenJournal
) -> None:
    """A new key's claim with a token is one `UPDATE` of the bucket that also probes the key's index (no entry:
    no row read), then a plain insert: no statement that reads the table it inserts into (SQLite copies such
    a statement's rows through a temporary table). When that `UPDATE` changes nothing (here: the bucket is
    missing), the token and the key are each looked at again."""
    journal = open_journal(url)
    journal.rate_limits  # noqa: B018 (its table is made on first use)
    writer: Any = getattr(journal, "_writer")  # noqa: B009 (its connection, to see the statements run)
    connection: sqlite3.Connection = getattr(writer, "_now")  # noqa: B009
    ran: list[str] = []
    connection.set_trace_callback(ran.append)
    take = RateToken("add:u1", RateLimit(calls=5, per_seconds=3600))
    for call_id in ("c1", "c2"):
        intent = entry(call_id)
        assert journal.claim(intent, wait=False, take=take).status == "new"
        result = dataclasses.replace(entry(call_id, "result"), intent_id=intent.id, idempotency_key=None)
        journal.append(result, wait=False)
    connection.set_trace_callback(None)
    assert [s.split(" (")[0].split(" SET")[0] for s in ran] == [
        "BEGIN IMMEDIATE",
        "UPDATE tether_rate_limits",  # the token if the key is new: the bucket is missing, nothing changes
        "UPDATE tether_rate_limits",  # the token alone: still nothing, so the bucket is made
        "SELECT tokens, updated FROM tether_rate_limits WHERE key = 'add:u1'",
        "INSERT INTO tether_rate_limits",
        "SELECT 1 FROM tether_journal WHERE kind = 'intent' AND idempotency_key = 'c1' LIMIT 1",
        "INSERT INTO tether_journal",
        "COMMIT",
        "INSERT INTO tether_journal",  # the result: one statement, its own transaction
        "BEGIN IMMEDIATE",  # the usual case: the token and the probe in one statement
        "UPDATE tether_rate_limits",
        "INSERT INTO tether_journal",
        "COMMIT",
        "INSERT INTO tether_journal",
    ]
    usual = ran[-4]
    assert (
        "NOT EXISTS (SELECT 1 FROM tether_journal WHERE kind = 'intent' AND idempotency_key = 'c2')" in usual
    )
    for probe in (next(s for s in ran if s.startswith("SELECT 1")), usual):
        plan = " ".join(row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {probe}"))
        assert "USING INDEX ix_tether_journal_intents (idempotency_key=?)" in plan  # a new key: no row read
    for statement in {s for s in ran if s.startswith(("SELECT", "INSERT", "UPDATE"))}:
        opcodes = [row[1] for row in connection.execute(f"EXPLAIN {statement}")]
        assert "OpenEphemeral" not in opcodes, statement
    assert [e.kind for e in journal.entries(call_id="c2")] == ["intent", "result"]
    assert journal.rate_limits.take("add:u1", take.limit) == 0  # two of its five tokens taken, not more
    assert journal.rate_limits.take("add:u1", take.limit) == 0
    assert journal.rate_limits.take("add:u1", take.limit) == 0
    assert journal.rate_limits.take("add:u1", take.limit) > 0


def test_a_sqlite_journal_has_no_event_loop_writes(url: str, open_journal: OpenJournal) -> None:
    """Its writes commit on the caller's thread (or in a thread) instead; see test_postgres_writer.py."""
    journal = open_journal(url)
    assert not journal.writes_async

    async def claim() -> Any:
        return await journal.claim_async(entry("c1"))

    with pytest.raises(WouldWait):
        anyio.run(claim)
    assert journal.entries() == []
