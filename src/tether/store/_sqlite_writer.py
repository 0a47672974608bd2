"""The SQLite journal's hot path on the raw DB-API connection: ~5x less overhead per write than SQLAlchemy.

Only `append`, `claim` (the two writes every call makes) and `take` (a rate-limit token) go this way; reads
stay on SQLAlchemy. Connections in autocommit mode with explicit `BEGIN IMMEDIATE`, used under one lock, so a
claim's lookup and insert are one atomic step for every process sharing the file. A claim with a rate-limit
token is, in the usual case, `BEGIN IMMEDIATE`, one `UPDATE` that takes the token if the key is new, the
`INSERT`, `COMMIT`. Values are stored exactly as SQLAlchemy's JSON and Boolean types store them, so either side
reads what the other wrote; a column that is None is left out of the `INSERT` rather than bound (`insert`).
"""

from __future__ import annotations

import functools
import json
import operator
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pydantic_core
from sqlalchemy import Engine

from tether.store._entries import ENTRY_FIELDS, JournalEntry, Lookup, OutcomeUnknown, WouldWait
from tether.store._journal import completed, may_run
from tether.store._rate_limits import RateLimited, RateToken, TokenBucket, Write
from tether.types import RateLimit

__all__ = ["SqliteWriter", "dumped", "insert"]

_T = TypeVar("_T")

_JSON = frozenset({"arguments", "annotations", "repairs", "envelope", "extra"})
_COLUMNS = ", ".join(ENTRY_FIELDS)
_WRITTEN = tuple(name for name in ENTRY_FIELDS if name != "id")
_OFTEN_NULL = (
    "intent_id", "session_id", "idempotency_key", "principal", "why",
    "outcome", "error_code", "duration_ms", "traceback", "note",
)  # fmt: skip
"""The columns `insert` leaves out when None, in the order it checks them."""
_INSERTS: dict[tuple[bool, ...], tuple[str, Callable[[tuple[Any, ...]], tuple[Any, ...]]]] = {}
"""The `INSERT` for each pattern of columns that are None, and what picks the others' values (see `insert`)."""
_HAS_INTENT = (  # a search of `ix_tether_journal_intents`: a new key has no entry there, so no row is read
    "SELECT 1 FROM tether_journal WHERE kind = 'intent' AND idempotency_key = ? LIMIT 1"
)
_LATEST_INTENT = f"SELECT {_COLUMNS} FROM tether_journal WHERE kind = 'intent' AND idempotency_key = ? ORDER BY id DESC LIMIT 1"
_COMPLETION = (
    f"SELECT {_COLUMNS} FROM tether_journal WHERE intent_id = ? AND kind IN ('result', 'resolution') "
    "ORDER BY id DESC LIMIT 1"
)

_NEW = Lookup("new")  # frozen: one for every new key

_BUCKET = "SELECT tokens, updated FROM tether_rate_limits WHERE key = ?"
_REFILL = "min(?1, tokens + max(0.0, ?2 - updated) * ?3)"  # calls, now, rate: as `TokenBucket.take` does
_TAKE_IF_THERE = (  # the usual case, in one statement: the bucket (?4) exists and holds a token
    f"UPDATE tether_rate_limits SET tokens = {_REFILL} - 1, updated = ?2 WHERE key = ?4 AND {_REFILL} >= 1"
)
_TAKE_IF_NEW = (  # a claim's usual case, in one statement: `_TAKE_IF_THERE`, if no intent has the key (?5)
    f"{_TAKE_IF_THERE} AND NOT EXISTS (SELECT 1 FROM tether_journal WHERE kind = 'intent' AND idempotency_key = ?5)"
)
_SAVE_BUCKET = (  # an upsert updates the row in place; OR REPLACE would delete and insert it (and its key)
    "INSERT INTO tether_rate_limits (key, tokens, updated) VALUES (?, ?, ?) "
    "ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, updated = excluded.updated"
)


class SqliteWriter:
    """The journal's writes on SQLite, each one `BEGIN IMMEDIATE` ... `COMMIT` transaction.

    A write can be tried on the caller's thread without waiting (`wait=False`): when nobody else holds the
    database's write lock, which is the usual case, it commits at once (~20 µs in WAL with
    `synchronous=NORMAL`: no fsync) and saves the hop to a worker thread (~60-160 µs) each way; otherwise it
    raises `WouldWait` and the caller does it again with `wait=True` from a thread, where SQLite's busy
    timeout may block. Its connection never checkpoints on commit (that would fsync on the caller's thread);
    a daemon thread checkpoints every `CHECKPOINT_EVERY` of its commits instead.
    """

    CHECKPOINT_EVERY = 1000

    def __init__(self, engine: Engine, *, inline: bool = True):
        self._engine = engine
        self._pooled: list[Any] = []  # the pool's wrappers, closed with the writer
        self._connection: Any = self._driver()  # autocommit: the engine's connect hook set it
        self._lock = threading.Lock()
        self._now: Any = None
        if inline:
            self._now = self._driver()
            self._now.execute("PRAGMA busy_timeout=0")  # busy: raise at once, never block the caller
            self._now.execute("PRAGMA wal_autocheckpoint=0")
        self._commits = 0

    def _driver(self) -> Any:
        """A connection of the engine's, as the `sqlite3` connection itself: the pool's wrapper would add
        an attribute lookup through Python to every statement."""
        pooled = self._engine.raw_connection()
        self._pooled.append(pooled)
        return pooled.driver_connection

    @property
    def inline(self) -> bool:
        """Whether writes may be tried on the caller's thread (`wait=False`)."""
        return self._now is not None

    def append(
        self, entry: JournalEntry, *, wait: bool = True, take: RateToken | None = None
    ) -> JournalEntry:
        if take is None and not wait:  # one statement: its own transaction (autocommit), no BEGIN or COMMIT
            now = self._now
            if now is None or not self._lock.acquire(blocking=False):  # this process writes from a thread
                raise WouldWait
            try:
                try:
                    cursor = now.execute(*insert(entry))
                except sqlite3.OperationalError as e:
                    if not _busy(e):  # e.g. an I/O error, perhaps in its commit: never written again
                        raise OutcomeUnknown(
                            f"the journal's write failed as it committed, it may have been written: {e}"
                        ) from e
                    raise WouldWait from e  # the write lock was not to be had: the statement wrote nothing
                entry.id = cursor.lastrowid
                self._committed()
            finally:
                self._lock.release()
        else:
            self._write(functools.partial(_append, entry=entry, take=take), wait)
        return entry

    def claim(self, intent: JournalEntry, *, wait: bool = True, take: RateToken | None = None) -> Lookup:
        if wait:
            return self._write(functools.partial(_claim, intent=intent, take=take), wait)
        now = self._begin_now()  # the usual case, spelled out: no closure, no frames between
        try:
            try:
                found = _claim(now, intent, take)
            except BaseException:
                if now.in_transaction:
                    now.execute("ROLLBACK")
                raise
            _commit(now)
            self._committed()
            return found
        finally:
            self._lock.release()

    def write_batch(
        self, writes: Sequence[Write], *, wait: bool = True
    ) -> list[Lookup | JournalEntry | Exception]:
        """Several claims and appends in one transaction (one commit); see `SqlJournal.write_batch`."""
        return self._write(functools.partial(_batch, writes=writes), wait)

    def take(self, key: str, limit: RateLimit, now: float, *, wait: bool = True) -> float:
        """A token from the rate-limit bucket `key` (see `SqlRateLimits`), in one write transaction."""
        return self._write(functools.partial(_take, key=key, limit=limit, now=now), wait)

    def close(self) -> None:
        with self._lock:
            for pooled in self._pooled:
                pooled.close()

    def _write(self, work: Callable[[Any], _T], wait: bool) -> _T:
        """`work` in one write transaction."""
        if wait:
            with self._lock:
                return _transaction(self._connection, work)
        now = self._begin_now()
        try:
            result = _finish(now, work)
            self._committed()
            return result
        finally:
            self._lock.release()

    def _begin_now(self) -> Any:
        """The caller's thread's connection in a write transaction, holding `_lock` (the caller releases
        it); `WouldWait` if this process writes from a thread or another process holds the write lock."""
        now = self._now
        if now is None or not self._lock.acquire(blocking=False):  # this process writes from a thread
            raise WouldWait
        try:
            now.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:  # another process holds the write lock
            self._lock.release()
            raise WouldWait from e
        except BaseException:
            self._lock.release()
            raise
        return now

    def _committed(self) -> None:
        """Count a commit on the caller's thread; every `CHECKPOINT_EVERY`, start a checkpoint beside. Never
        raises: the write is committed, and an error now would read as a write that failed."""
        self._commits += 1
        if self._commits % self.CHECKPOINT_EVERY == 0:
            checkpoint = threading.Thread(
                target=self._checkpoint, name="tether-journal-checkpoint", daemon=True
            )
            try:
                checkpoint.start()
            except RuntimeError:  # no thread to be had now ("can't start new thread"): the next commit tries
                self._commits -= 1

    def _checkpoint(self) -> None:
        """Copy the WAL into the database, then let the next write start the WAL again from its beginning.

        SQLite restarts the WAL only when a write begins with every frame already copied; a checkpoint
        running beside a busy writer never gets there, and the WAL would grow without bound (~40 MB per
        1,000 calls, every write appending to a longer file). So: a passive checkpoint beside the writers
        (the bulk of the work), then a second one holding the writer's lock, which copies only the frames
        written meanwhile; writes wanted during it wait in a thread (`WouldWait`), as for any other writer.
        """
        connection = self._engine.raw_connection()
        try:
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)")  # beside writers, never blocking them
            with self._lock:
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            connection.close()


def _transaction(connection: Any, work: Callable[[Any], _T]) -> _T:
    connection.execute("BEGIN IMMEDIATE")
    return _finish(connection, work)


def _finish(connection: Any, work: Callable[[Any], _T]) -> _T:
    """Run `work` in the transaction `connection` has begun, and commit it (or roll it back)."""
    try:
        result = work(connection)
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    _commit(connection)
    return result


def _commit(connection: Any) -> None:
    """`COMMIT` the transaction `connection` is in. If SQLite refuses it and the transaction is still open,
    it is rolled back: nothing written (the error is raised as it is). If SQLite ended the transaction all
    the same (an I/O error part way through the commit, after which it rolls back in memory while the
    commit's frames may be in the WAL, where recovery would find them), `OutcomeUnknown`."""
    try:
        connection.execute("COMMIT")
    except BaseException as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
            raise
        if not isinstance(error, Exception):
            raise
        raise OutcomeUnknown(
            f"the journal's commit failed part way, it may have been written: {error}"
        ) from error


def _busy(error: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused a statement for a lock another connection holds (it then wrote nothing)."""
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _insert(connection: Any, entry: JournalEntry) -> None:
    entry.id = int(connection.execute(*insert(entry)).lastrowid)


def insert(e: JournalEntry) -> tuple[str, tuple[Any, ...]]:
    """The `INSERT` of entry `e` and its parameters (`dumped`), leaving out the columns that are often None
    and are: such a column gets NULL without a bound parameter. Python's `sqlite3` binds a None only after
    looking for an adapter for it (a registry lookup and, up to 3.11, an `AttributeError` made and dropped),
    ~0.7 µs each, and an entry has 3 to 10 of them; the checks below cost ~0.4 µs. A None elsewhere is
    bound as a parameter: the same NULL."""
    nulls = (
        e.intent_id is None,
        e.session_id is None,
        e.idempotency_key is None,
        e.principal is None,
        e.why is None,
        e.outcome is None,
        e.error_code is None,
        e.duration_ms is None,
        e.traceback is None,
        e.note is None,
    )
    found = _INSERTS.get(nulls)
    if (
        found is None
    ):  # at most 2 ** 10 patterns, a few in practice: a kind of entry, a call's optional fields
        left_out = {name for name, null in zip(_OFTEN_NULL, nulls, strict=True) if null}
        kept = [i for i, name in enumerate(_WRITTEN) if name not in left_out]  # NOT NULL ones: 2 or more
        columns = ", ".join(_WRITTEN[i] for i in kept)
        sql = f"INSERT INTO tether_journal ({columns}) VALUES ({', '.join('?' * len(kept))})"
        found = _INSERTS[nulls] = (sql, operator.itemgetter(*kept))
    sql, pick = found
    return sql, pick(dumped(e))


def dumped(e: JournalEntry) -> tuple[Any, ...]:
    """The entry's column values (in `_WRITTEN`'s order) as SQLAlchemy's types store them."""
    return (
        e.kind,
        e.call_id,
        e.tool,
        e.created_at,
        e.intent_id,
        e.session_id,
        e.run_id,
        e.idempotency_key,
        e.side_effects,
        e.principal,
        e.why,
        _json(e.arguments),
        _json(e.annotations) if e.annotations else "[]",  # the empty values most entries carry: no call
        _json(e.repairs) if e.repairs else "[]",
        1 if e.repaired else 0,
        e.outcome,
        e.error_code,
        _json(e.envelope),
        e.duration_ms,
        e.traceback,
        e.pid,
        e.host,
        e.note,
        _json(e.extra) if e.extra else "{}",
    )


def _append(connection: Any, entry: JournalEntry, take: RateToken | None) -> None:
    if take is not None:
        _take_or_refuse(connection, take)
    _insert(connection, entry)


def _claim(connection: Any, intent: JournalEntry, take: RateToken | None) -> Lookup:
    key = intent.idempotency_key
    assert key is not None
    if take is not None:
        # The usual case in one statement: the bucket holds a token and the key is new. Otherwise it
        # changed nothing, and the token and the key are each looked at again below.
        limit = take.limit
        taken = (float(limit.calls), time.time(), limit.calls / limit.per_seconds, take.key, key)
        if connection.execute(_TAKE_IF_NEW, taken).rowcount == 1:
            intent.id = connection.execute(*insert(intent)).lastrowid
            return _NEW
        _take_or_refuse(connection, take)
    # The usual case, a key never seen: a probe of the key's index, then a plain insert (the transaction
    # holds the write lock, so nothing comes between them). One `INSERT ... SELECT ... WHERE NOT EXISTS`
    # would be a statement fewer but costs more: it reads the table it inserts into, so SQLite first
    # copies its one row into a temporary table (~15 µs more a call inside the executor).
    if connection.execute(_HAS_INTENT, (key,)).fetchone() is None:
        intent.id = connection.execute(*insert(intent)).lastrowid
        return _NEW
    found = _lookup(connection, key)
    if may_run(found, intent):
        _insert(connection, intent)
    return found


def _take(connection: Any, key: str, limit: RateLimit, now: float) -> float:
    taken = (float(limit.calls), now, limit.calls / limit.per_seconds, key)  # bound by position: cheaper
    if connection.execute(_TAKE_IF_THERE, taken).rowcount == 1:
        return 0.0
    row = connection.execute(_BUCKET, (key,)).fetchone()
    bucket = TokenBucket(limit, float(limit.calls), now) if row is None else TokenBucket(limit, *row)
    wait = bucket.take(now)
    if not wait:  # a refusal need not write: the bucket refills from the same point either way
        connection.execute(_SAVE_BUCKET, (key, bucket.tokens, bucket.updated))
    return wait


def _batch(connection: Any, writes: Sequence[Write]) -> list[Lookup | JournalEntry | Exception]:
    results: list[Lookup | JournalEntry | Exception] = []
    for write in writes:
        try:
            if write.claim:
                results.append(_claim(connection, write.entry, write.take))
            else:
                _append(connection, write.entry, write.take)
                results.append(write.entry)
        except RateLimited as limited:  # it wrote nothing: the others stand
            results.append(limited)
    return results


def _take_or_refuse(connection: Any, take: RateToken) -> None:
    """The token first: without one the transaction is rolled back, and nothing is written."""
    retry_after = _take(connection, take.key, take.limit, time.time())
    if retry_after:
        raise RateLimited(retry_after)


def _lookup(connection: Any, key: str) -> Lookup:
    row = connection.execute(_LATEST_INTENT, (key,)).fetchone()
    if row is None:
        return Lookup("new")
    intent = _load(row)
    done = connection.execute(_COMPLETION, (intent.id,)).fetchone()
    return completed(intent, _load(done) if done is not None else None)


def _json(value: Any) -> str:
    """JSON text as SQLAlchemy's JSON type reads it back (compact; pydantic's encoder, ~6x faster than
    `json.dumps` on an entry's small dicts); the empty values most entries carry cost nothing."""
    if value is None:
        return "null"
    if value == () or value == {}:
        return "[]" if isinstance(value, tuple) else "{}"
    try:
        return pydantic_core.to_json(value).decode()
    except pydantic_core.PydanticSerializationError:  # e.g. a lone surrogate, which `json` escapes
        return json.dumps(value)


def _load(row: tuple[Any, ...]) -> JournalEntry:
    values = {
        name: json.loads(v) if name in _JSON and v is not None else v
        for name, v in zip(ENTRY_FIELDS, row, strict=True)
    }
    values["annotations"] = tuple(values["annotations"] or ())
    values["repairs"] = tuple(values["repairs"] or ())
    values["extra"] = values["extra"] or {}
    values["repaired"] = bool(values["repaired"])
    return JournalEntry(**values)
