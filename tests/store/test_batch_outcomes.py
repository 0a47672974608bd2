"""A group commit's outcome is exact: a batch that failed before its commit is written again one write at a
time (one bad entry fails alone); one that may have committed is never written again (no entry twice, no key
claimed twice), each of its writes failing with `OutcomeUnknown`, its call in doubt as after a crash."""

from __future__ import annotations

import contextlib
import sqlite3
import time
import types
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from tether.store import JournalEntry, Lookup, SqlJournal
from tether.store.internal import JournalWriter, OutcomeUnknown, Write

pytestmark = pytest.mark.anyio

_LOST = "consuming input failed: server closed the connection unexpectedly"


def entry(call_id: str, key: str | None = None, *, pid: int = 1) -> JournalEntry:
    return JournalEntry(
        kind="intent",
        call_id=call_id,
        tool="t",
        created_at=time.time(),
        idempotency_key=key,
        side_effects="read_only",  # a read-only call in doubt may run again: a claim written twice would land
        pid=pid,
    )


def mixed(count: int) -> list[Write]:
    """Appends and claims of new keys, alternately."""
    return [Write(entry(f"c{i}", f"k{i}" if i % 2 else None), claim=bool(i % 2)) for i in range(count)]


def batched(journal: SqlJournal) -> list[int]:
    """The size of every batch `journal` is given (a `JournalWriter` made after this sees them)."""
    sizes: list[int] = []
    for name in ("write_batch", "write_batch_async"):
        real = getattr(journal, name)

        def recording(writes: list[Write], *args: Any, real: Any = real, **kwargs: Any) -> Any:
            sizes.append(len(writes))
            return real(writes, *args, **kwargs)

        setattr(journal, name, recording)
    return sizes


async def write_together(journal: SqlJournal, writes: list[Write]) -> list[object]:
    """`writes` made at the same moment by as many calls through one `JournalWriter`: each one's outcome."""
    writer = JournalWriter(journal, anyio.CapacityLimiter(4))
    writer.calls = len(writes)
    outcomes: list[object] = [None] * len(writes)

    async def write(index: int, one: Write) -> None:
        try:
            outcomes[index] = await (writer.claim(one.entry) if one.claim else writer.append(one.entry))
        except Exception as e:
            outcomes[index] = e

    async with anyio.create_task_group() as group:
        for index, one in enumerate(writes):
            group.start_soon(write, index, one)
    return outcomes


def written(journal: SqlJournal) -> Counter[str]:
    """How many entries each call has in the journal."""
    return Counter(e.call_id for e in journal.entries())


class _Proxy:
    """Passes everything on to the connection it wraps, but what a test changes."""

    def __init__(self, real: Any):
        self.real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class CommitEndsInError(_Proxy):
    """A `sqlite3` connection whose next `COMMIT` commits and then reports an error, as SQLite does for an I/O
    error part way through a commit it ends anyway (the transaction is over: `in_transaction` is False)."""

    armed = True

    def execute(self, sql: str, *args: Any) -> Any:
        cursor = self.real.execute(sql, *args)
        if sql == "COMMIT" and self.armed:
            self.armed = False
            raise sqlite3.OperationalError("disk I/O error")
        return cursor


class InsertEndsInError(_Proxy):
    """A `sqlite3` connection whose next lone `INSERT` (its own transaction) is written and then reports an
    I/O error."""

    armed = True

    def execute(self, sql: str, *args: Any) -> Any:
        cursor = self.real.execute(sql, *args)
        if sql.startswith("INSERT") and not self.real.in_transaction and self.armed:
            self.armed = False
            raise sqlite3.OperationalError("disk I/O error")
        return cursor


def sqlite_writer(journal: SqlJournal) -> Any:
    return getattr(journal, "_writer")  # noqa: B009 - the test breaks the writer's connection


def pg_writer(journal: SqlJournal) -> Any:
    return getattr(journal, "_pg_writer")  # noqa: B009 - the test breaks the writer's connection


def lose(connection: Any) -> None:
    """Drop the connection as a network failure would: the client's end closed, the server's gone with it."""
    connection.pgconn.finish()
    import psycopg

    raise psycopg.OperationalError(_LOST)


class LosesCommitsAnswer(_Proxy):
    """A psycopg connection whose next pipeline goes through, its `COMMIT` included, and is then lost before
    the client has its answer."""

    armed = True

    @contextlib.contextmanager
    def pipeline(self) -> Iterator[Any]:
        with self.real.pipeline() as pipeline:
            yield pipeline
        if self.armed:
            self.armed = False
            lose(self.real)


class LosesAsyncCommitsAnswer(_Proxy):
    """`LosesCommitsAnswer` for a `psycopg.AsyncConnection`."""

    armed = True

    @contextlib.asynccontextmanager
    async def pipeline(self) -> AsyncIterator[Any]:
        async with self.real.pipeline() as pipeline:
            yield pipeline
        if self.armed:
            self.armed = False
            lose(self.real)


def assert_in_doubt(outcomes: list[object], journal: SqlJournal, writes: list[Write]) -> None:
    """Every write failed with `OutcomeUnknown`, and each is in the journal once: the batch did commit."""
    assert written(journal) == {w.entry.call_id: 1 for w in writes}
    assert all(isinstance(outcome, OutcomeUnknown) for outcome in outcomes), outcomes
    assert len({id(outcome) for outcome in outcomes}) == len(outcomes)  # each call raises its own


async def test_a_sqlite_batch_whose_commit_fails_after_committing_is_not_written_again(tmp_path: Any) -> None:
    journal = SqlJournal(f"sqlite:///{tmp_path / 'journal.db'}")
    try:
        sizes = batched(journal)
        sqlite_writer(journal)._now = CommitEndsInError(sqlite_writer(journal)._now)
        writes = mixed(6)
        outcomes = await write_together(journal, writes)
        assert sizes == [6]
        assert_in_doubt(outcomes, journal, writes)
        assert [e.call_id for e in journal.in_doubt()] == [f"c{i}" for i in range(6)]
    finally:
        journal.close()


async def test_a_sqlite_batch_stands_when_no_thread_can_be_had_for_the_checkpoint_after_it(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    class NoThread:
        def __init__(self, **_: Any):
            pass

        def start(self) -> None:
            raise RuntimeError("can't start new thread")

    journal = SqlJournal(f"sqlite:///{tmp_path / 'journal.db'}")
    try:
        sizes = batched(journal)
        writer = sqlite_writer(journal)
        writer.CHECKPOINT_EVERY = 3  # the batch's commit is the third: a checkpoint is the step after it
        journal.append(entry("first"), wait=False)
        journal.append(entry("second"), wait=False)
        from tether.store import _sqlite_writer  # the module whose threads the test takes away

        monkeypatch.setattr(_sqlite_writer, "threading", types.SimpleNamespace(Thread=NoThread))
        writes = mixed(6)
        outcomes = await write_together(journal, writes)
        assert sizes == [6]
        assert written(journal) == {"first": 1, "second": 1} | {w.entry.call_id: 1 for w in writes}
        assert outcomes == [Lookup("new") if w.claim else w.entry for w in writes]
        assert all(w.entry.id is not None for w in writes)
        started: list[str] = []  # threads again: the checkpoint missed is started by the next commit

        class Recorded(NoThread):
            def __init__(self, **kwargs: Any):
                self.name = kwargs["name"]

            def start(self) -> None:
                started.append(self.name)

        monkeypatch.setattr(_sqlite_writer, "threading", types.SimpleNamespace(Thread=Recorded))
        journal.append(entry("later"), wait=False)
        assert started == ["tether-journal-checkpoint"]
    finally:
        journal.close()


async def test_a_lone_sqlite_write_whose_commit_reports_an_io_error_is_not_written_again(
    tmp_path: Any,
) -> None:
    # An autocommit INSERT's error is not "busy" (which wrote nothing): it is not tried again in a thread,
    # and it may have committed (its statement is its transaction): `OutcomeUnknown`, its call in doubt.
    journal = SqlJournal(f"sqlite:///{tmp_path / 'journal.db'}")
    try:
        sqlite_writer(journal)._now = InsertEndsInError(sqlite_writer(journal)._now)
        writer = JournalWriter(journal, anyio.CapacityLimiter(4))
        failed: Exception | None = None
        try:
            await writer.append(entry("c0"))
        except OutcomeUnknown as e:
            failed = e
        assert written(journal) == {"c0": 1}
        assert isinstance(failed, OutcomeUnknown)
        assert isinstance(failed.__cause__, sqlite3.OperationalError)
        assert str(failed.__cause__) == "disk I/O error"
    finally:
        journal.close()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
@pytest.mark.parametrize("where", ["event loop", "thread"])
async def test_a_postgres_batch_whose_connection_is_lost_after_its_commit_is_not_written_again(
    journal_url: str, where: str
) -> None:
    journal = SqlJournal(journal_url)
    try:
        sizes = batched(journal)
        pg = pg_writer(journal)
        if where == "event loop":
            await journal.append_async(entry("warm"))  # the loop's connection, made
            pg._async = LosesAsyncCommitsAnswer(pg._async)
        else:  # the loop has no connection yet: the batch goes to a thread meanwhile
            journal.append(entry("warm"))
            pg._connection = LosesCommitsAnswer(pg._connection)
        writes = mixed(6)
        outcomes = await write_together(journal, writes)
        assert sizes == (
            [6] if where == "event loop" else [6, 6]
        )  # the thread's after the loop's `WouldWait`
        assert_in_doubt(outcomes, journal, [Write(entry("warm")), *writes])
        assert [e.call_id for e in journal.in_doubt()] == ["warm", *(f"c{i}" for i in range(6))]
        await journal.append_async(entry("after"))  # waits for a connection made beside, so that it is closed
    finally:
        journal.close()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
async def test_a_postgres_batch_write_that_fails_after_the_batch_committed_fails_alone(
    journal_url: str,
) -> None:
    # A claim of a key with an intent needs a second transaction, in a thread; here that thread cannot
    # connect. The batch's other writes are committed: they stand, and only that claim fails.
    journal = SqlJournal(journal_url)
    try:
        await journal.claim_async(entry("before", "taken"))  # the loop's connection, and the key's intent
        pg = pg_writer(journal)
        pg._conninfo = "postgresql://tether@127.0.0.1:1/nowhere"  # the thread's connection: refused
        writes = [
            Write(entry("c0")),
            Write(entry("c1", "k1"), claim=True),
            Write(entry("c2", "taken"), claim=True),
        ]
        outcomes = await write_together(journal, writes)
        assert written(journal) == {"before": 1, "c0": 1, "c1": 1}
        assert outcomes[:2] == [writes[0].entry, Lookup("new")]
        assert isinstance(outcomes[2], Exception)
        assert not isinstance(outcomes[2], OutcomeUnknown)
        assert writes[2].entry.id is None
    finally:
        journal.close()


async def test_a_batch_with_an_entry_the_database_refuses_is_written_one_by_one(journal_url: str) -> None:
    # Refused before the commit (SQLite cannot bind the integer; PostgreSQL's cast overflows and the
    # pipeline's transaction aborts, its COMMIT sent but skipped): nothing was written, so the writes go
    # again one at a time and only the bad one fails.
    journal = SqlJournal(journal_url)
    try:
        sizes = batched(journal)
        writes = mixed(6)
        writes[3] = Write(entry("bad", "k-bad", pid=2**70), claim=True)
        outcomes = await write_together(journal, writes)
        assert sizes[-1] == 6
        assert isinstance(outcomes[3], Exception)
        assert not isinstance(outcomes[3], OutcomeUnknown)
        good = [w for i, w in enumerate(writes) if i != 3]
        assert [o for i, o in enumerate(outcomes) if i != 3] == [
            Lookup("new") if w.claim else w.entry for w in good
        ]
        assert written(journal) == {w.entry.call_id: 1 for w in good}
    finally:
        journal.close()


class CommitsThenFails(sqlite3.Connection):
    """A `sqlite3` connection whose `commit()`, once armed, commits and then reports an I/O error."""

    armed = False

    def commit(self) -> None:
        super().commit()
        if CommitsThenFails.armed:
            CommitsThenFails.armed = False
            raise sqlite3.OperationalError("disk I/O error")


async def test_a_batch_on_an_engine_given_whose_commit_fails_after_committing_is_not_written_again(
    tmp_path: Any,
) -> None:
    # `SqlJournal(engine=...)` writes through SQLAlchemy: its commit is the DB-API connection's `commit()`.
    from sqlalchemy import create_engine

    path = tmp_path / "journal.db"
    engine = create_engine(
        f"sqlite:///{path}",
        creator=lambda: sqlite3.connect(path, factory=CommitsThenFails, check_same_thread=False),
    )
    journal = SqlJournal(f"sqlite:///{path}", engine=engine)
    try:
        sizes = batched(journal)
        writes = mixed(6)
        CommitsThenFails.armed = True
        outcomes = await write_together(journal, writes)
        assert sizes == [6]
        assert_in_doubt(outcomes, journal, writes)
    finally:
        CommitsThenFails.armed = False
        journal.close()
