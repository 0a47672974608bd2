"""`SqlJournal`: the journal in SQLite (a file, WAL) or PostgreSQL, chosen by URL."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Self

from sqlalchemy import Connection, Engine, bindparam, exists, insert, select, text, union_all
from sqlalchemy.engine import Row

from tether.store._engine import open_engine, prepare, writing
from tether.store._entries import DEFAULT_URL, ENTRY_FIELDS, JournalEntry, Lookup, OutcomeUnknown, WouldWait
from tether.store._journal import completed, may_run
from tether.store._postgres_writer import PostgresWriter
from tether.store._rate_limits import RateLimited, RateToken, Write
from tether.store._sql_rate_limits import SqlRateLimits, take_token
from tether.store._sqlite_writer import SqliteWriter
from tether.store._tables import INTENT, STARTS_CALL, journal_table, metadata, replaced_indexes

__all__ = ["SqlJournal"]

_COMPLETIONS = ("result", "resolution")
_T = journal_table
# Built once: SQLAlchemy then reuses their compiled form, which matters at a few hundred µs per statement.
_INSERT = insert(_T)
_LATEST_INTENT = (
    select(_T).where(text(INTENT), _T.c.idempotency_key == bindparam("key")).order_by(_T.c.id.desc()).limit(1)
)
_ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")
_COMPLETION = (
    select(_T)
    .where(_T.c.intent_id == bindparam("intent_id"), _T.c.kind.in_(_COMPLETIONS))
    .order_by(_T.c.id.desc())
    .limit(1)
)


class SqlJournal:
    """An append-only journal in a SQL database; creates its table on first use.

    Args:
        url: A SQLAlchemy URL: `sqlite:///path/to/journal.db` (the default file is `./tether-journal.db`)
            or `postgresql+psycopg://user@host/db` (install `tether[postgres]`).
        durable: For SQLite, `synchronous=FULL` (an fsync a commit: every commit survives power loss)
            instead of `NORMAL` (every commit survives a crash of the process, SIGKILL included, which is
            what in-doubt detection needs, at a fraction of the cost; on power loss the commits since the
            last checkpoint, at most ~1,000, may be lost, the file staying consistent).

    On a SQLite file (not `durable`), `append` and `claim` can be tried on the caller's thread without
    waiting (`wait=False`, see `inline`): they commit at once when nobody else is writing, and raise
    `WouldWait` otherwise. Either way an entry is committed when the call returns. On PostgreSQL by URL
    (`postgresql+psycopg://`), the writes go over a psycopg connection of the journal's own, each one
    round trip (see `_postgres_writer`), and `append_async` and `claim_async` make the same writes from the
    event loop (`writes_async`); the schema and the reads stay on SQLAlchemy.
    """

    blocking = True

    def __init__(self, url: str = DEFAULT_URL, *, durable: bool = False, engine: Engine | None = None):
        self.url = url
        self.engine = prepare(engine) if engine is not None else open_engine(url, durable=durable)
        self._postgres = self.engine.dialect.name == "postgresql"
        metadata.create_all(self.engine)
        with self.engine.begin() as connection:  # a journal an earlier version made: its indexes now
            for index in journal_table.indexes:
                index.create(connection, checkfirst=True)
            for name in replaced_indexes:
                connection.execute(text(f"DROP INDEX IF EXISTS {name}"))
        self._writer = (
            SqliteWriter(self.engine, inline=not durable)
            if engine is None and url.startswith("sqlite")
            else None
        )
        self._pg_writer = (  # raw psycopg: one round trip a write where SQLAlchemy made several
            PostgresWriter(self.engine)
            if engine is None and self._postgres and self.engine.dialect.driver == "psycopg"
            else None
        )
        self._rate_limits: SqlRateLimits | None = None

    takes_rate_tokens = True
    """`claim` and `append` accept `take=`: an executor whose rate limits are this journal's takes a call's
    token in the transaction that writes its intent."""

    @property
    def rate_limits(self) -> SqlRateLimits:
        """Rate-limit buckets in the journal's database: an executor with this journal keeps its limits
        there, so executors (and processes) sharing the database share them."""
        if self._rate_limits is None:
            self._rate_limits = SqlRateLimits(self.engine, writer=self._writer, pg_writer=self._pg_writer)
        return self._rate_limits

    @property
    def inline(self) -> bool:
        """Whether `append` and `claim` may be tried with `wait=False` on the caller's (event loop's) thread."""
        return self._writer is not None and self._writer.inline

    def append(
        self, entry: JournalEntry, *, wait: bool = True, take: RateToken | None = None
    ) -> JournalEntry:
        """Append `entry`; with `take`, first take that rate-limit token in the same transaction, or raise
        `RateLimited` having written nothing."""
        if self._writer is not None:
            return self._writer.append(entry, wait=wait, take=take)
        if not wait:
            raise WouldWait
        if self._pg_writer is not None:
            return self._pg_writer.append(entry, take=take)
        if take is None:
            with self.engine.begin() as connection:
                return _insert(connection, entry)
        with writing(self.engine) as connection:
            _take_or_refuse(connection, take)
            return _insert(connection, entry)

    @property
    def writes_async(self) -> bool:
        """Whether `append_async`, `claim_async` and `write_batch_async` write from the event loop without a
        worker thread (on PostgreSQL by URL: one connection, used by one running loop at a time)."""
        return self._pg_writer is not None

    async def append_async(
        self, entry: JournalEntry, *, take: RateToken | None = None, connect: bool = True
    ) -> JournalEntry:
        """`append` awaited on the event loop (see `writes_async`), committed when it returns; `WouldWait`,
        having written nothing, where it cannot be (SQLite, or another thread's loop has the connection), or
        with `connect=False` while the loop's connection is still being made."""
        if self._pg_writer is None:
            raise WouldWait
        return await self._pg_writer.append_async(entry, take=take, connect=connect)

    async def claim_async(
        self, intent: JournalEntry, *, take: RateToken | None = None, connect: bool = True
    ) -> Lookup:
        """`claim` awaited on the event loop, as `append_async`."""
        if self._pg_writer is None:
            raise WouldWait
        return await self._pg_writer.claim_async(intent, take=take, connect=connect)

    async def write_batch_async(
        self, writes: Sequence[Write], *, connect: bool = True
    ) -> list[Lookup | JournalEntry | Exception]:
        """`write_batch` awaited on the event loop, as `append_async`: one commit for them all."""
        if self._pg_writer is None:
            raise WouldWait
        return await self._pg_writer.write_batch_async(writes, connect=connect)

    def lookup(self, idempotency_key: str) -> Lookup:
        with self.engine.connect() as connection:
            return _lookup(connection, idempotency_key)

    def claim(self, intent: JournalEntry, *, wait: bool = True, take: RateToken | None = None) -> Lookup:
        """See `Journal.claim`; with `take`, first take that rate-limit token in the same transaction, or
        raise `RateLimited` having written nothing."""
        key = intent.idempotency_key
        assert key is not None
        if self._writer is not None:
            return self._writer.claim(intent, wait=wait, take=take)
        if not wait:
            raise WouldWait
        if self._pg_writer is not None:
            return self._pg_writer.claim(intent, take=take)
        with writing(self.engine) as connection:
            if take is not None:  # a bucket's lock before a key's, always: no two claims deadlock
                _take_or_refuse(connection, take)
            if self._postgres:  # one claimer per key at a time, across processes, until commit
                connection.execute(_ADVISORY_LOCK, {"key": key})
            found = _lookup(connection, key)
            if may_run(found, intent):
                _insert(connection, intent)
        return found

    def write_batch(
        self, writes: Sequence[Write], *, wait: bool = True
    ) -> list[Lookup | JournalEntry | Exception]:
        """Claims and appends in one transaction, one commit for them all (group commit of concurrent calls):
        each write's result in order, a `RateLimited` for a write whose token was not there (that write
        alone wrote nothing). Each claim is as atomic as alone: the transaction holds the write lock (SQLite)
        or every bucket's and key's lock, taken in one order by every writer (PostgreSQL).

        Raises `OutcomeUnknown` if the batch failed once its `COMMIT` was sent and may have been written
        (then no write may be made again); any other exception means none was written. On PostgreSQL a
        write the batch's transaction could not make (a key that has an intent, a missing or empty bucket)
        is made in a transaction of its own after it: if that fails, the exception is that write's result,
        the others stand."""
        if self._writer is not None:
            return self._writer.write_batch(writes, wait=wait)
        if not wait:
            raise WouldWait
        if self._pg_writer is not None:
            return self._pg_writer.write_batch(writes)
        results: list[Lookup | JournalEntry | Exception] = []
        committing = False
        try:
            with writing(self.engine) as connection:
                if self._postgres:  # all buckets then all keys, each sorted: no two batches deadlock
                    buckets = sorted({f"tether-rate:{w.take.key}" for w in writes if w.take is not None})
                    keys = sorted(
                        {w.entry.idempotency_key for w in writes if w.claim and w.entry.idempotency_key}
                    )
                    for key in [*buckets, *keys]:
                        connection.execute(_ADVISORY_LOCK, {"key": key})
                for write in writes:
                    try:
                        results.append(_write(connection, write))
                    except RateLimited as limited:
                        results.append(limited)
                committing = True  # leaving the block commits
        except Exception as error:
            if committing:  # the commit (or what follows it) failed: it may have gone through
                raise OutcomeUnknown(
                    f"the journal's commit failed, it may have been written: {error}"
                ) from error
            raise
        return results

    def in_doubt(self) -> list[JournalEntry]:
        t, c = journal_table, journal_table.alias("completion")
        completion = exists().where(c.c.intent_id == t.c.id, c.c.kind.in_(_COMPLETIONS))
        query = select(t).where(t.c.kind == "intent", ~completion).order_by(t.c.id)
        with self.engine.connect() as connection:
            return [_entry(row) for row in connection.execute(query)]

    def entries(
        self, *, limit: int | None = None, call_id: str | None = None, since_id: int | None = None
    ) -> list[JournalEntry]:
        t = journal_table
        if call_id is not None:  # a call's first entries, then what completes them (see `_tables`)
            starts = select(t.c.id).where(t.c.call_id == call_id, text(STARTS_CALL))
            query = union_all(
                select(t).where(t.c.call_id == call_id, text(STARTS_CALL)),
                select(t).where(t.c.intent_id.in_(starts), t.c.call_id == call_id),
            )
            with self.engine.connect() as connection:
                found = [_entry(row) for row in connection.execute(query)]
            found = sorted((e for e in found if since_id is None or (e.id or 0) > since_id), key=_id)
            return found[-limit:] if limit else found
        query = select(t)
        if since_id is not None:
            query = query.where(t.c.id > since_id)
        if limit:
            query = query.order_by(t.c.id.desc()).limit(limit)
        with self.engine.connect() as connection:
            found = [_entry(row) for row in connection.execute(query)]
        return sorted(found, key=_id)

    def entry(self, entry_id: int) -> JournalEntry | None:
        with self.engine.connect() as connection:
            row = connection.execute(select(journal_table).where(journal_table.c.id == entry_id)).first()
        return _entry(row) if row is not None else None

    def close(self) -> None:
        """Close the journal's database connections."""
        if self._writer is not None:
            self._writer.close()
        if self._pg_writer is not None:
            self._pg_writer.close()
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _write(connection: Connection, write: Write) -> Lookup | JournalEntry:
    """One write of a batch, in its transaction (which holds the locks it needs)."""
    if write.take is not None:
        _take_or_refuse(connection, write.take)
    if not write.claim:
        return _insert(connection, write.entry)
    assert write.entry.idempotency_key is not None
    found = _lookup(connection, write.entry.idempotency_key)
    if may_run(found, write.entry):
        _insert(connection, write.entry)
    return found


def _take_or_refuse(connection: Connection, take: RateToken) -> None:
    retry_after = take_token(connection, take.key, take.limit, time.time())
    if retry_after:
        raise RateLimited(retry_after)  # leaving `writing` rolls the transaction back


def _id(entry: JournalEntry) -> int:
    return entry.id or 0


def _insert(connection: Connection, entry: JournalEntry) -> JournalEntry:
    values = {name: getattr(entry, name) for name in ENTRY_FIELDS if name != "id"}
    values["annotations"] = list(entry.annotations)
    values["repairs"] = list(entry.repairs)
    new_id = connection.execute(_INSERT, values).inserted_primary_key
    assert new_id is not None
    entry.id = int(new_id[0])
    return entry


def _lookup(connection: Connection, key: str) -> Lookup:
    row = connection.execute(_LATEST_INTENT, {"key": key}).first()
    if row is None:
        return Lookup("new")
    done = connection.execute(_COMPLETION, {"intent_id": row.id}).first()
    return completed(_entry(row), _entry(done) if done is not None else None)


def _entry(row: Row[Any]) -> JournalEntry:
    values = {name: getattr(row, name) for name in ENTRY_FIELDS}
    values["annotations"] = tuple(values["annotations"] or ())
    values["repairs"] = tuple(values["repairs"] or ())
    values["extra"] = values["extra"] or {}
    values["repaired"] = bool(values["repaired"])
    return JournalEntry(**values)
