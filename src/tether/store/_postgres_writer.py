"""The PostgreSQL journal's hot path on a raw psycopg connection: one round trip a write.

`append`, `claim`, `write_batch` (the writes every call makes) and `take` (a rate-limit token) go this way;
the schema and every read stay on SQLAlchemy. `append_async`, `claim_async` and `write_batch_async` send
the same pipelines from the event loop, over one async connection used by one running loop at a time (no
worker thread): psycopg's `AsyncConnection` belongs to no loop (each wait registers with the running one),
so the connection a loop left idle serves the next (no new server backend a loop). A write is one pipeline
(psycopg's pipeline mode: its statements sent together, answered together), its own transaction:

- a claim: `BEGIN`, the advisory locks (the bucket's, then the key's: the order every writer takes them in,
  so no two deadlock), one statement that takes the token (a conditional `UPDATE` of the bucket) and inserts
  the intent if no intent has its key (`INSERT ... WHERE NOT EXISTS`), `COMMIT`;
- an append: one `INSERT` (its own transaction), or with a token the same pipeline as a claim.

The key's lock is taken by an earlier statement of the transaction than the insert, so the insert's snapshot
sees every intent committed under that lock: a claim is atomic across processes. When the fast statement did
not insert (the key has an intent already, or the bucket is missing or empty), what it did is committed
(a token taken, or nothing) and the claim finishes in a second transaction under the same locks, as
`SqlJournal` did it before: look up the key, insert if `may_run`; take the token from the bucket read `FOR
UPDATE` (or made) when the first statement took none. Values are stored exactly as SQLAlchemy's JSON and
Boolean types store them (`None` as JSON `null` in a JSON column), so either side reads what the other wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from sqlalchemy import Engine

from tether.store._entries import ENTRY_FIELDS, JournalEntry, Lookup, OutcomeUnknown, WouldWait
from tether.store._journal import completed, may_run
from tether.store._rate_limits import RateLimited, RateToken, TokenBucket, Write
from tether.store._sqlite_writer import dumped
from tether.store._tables import journal_table
from tether.types import RateLimit

__all__ = ["PostgresWriter"]

_T = TypeVar("_T")

_WRITTEN = tuple(name for name in ENTRY_FIELDS if name != "id")
_CASTS = {"BIGINT": "bigint", "INTEGER": "int", "FLOAT": "float8", "BOOLEAN": "bool", "JSON": "json"}


def _cast(name: str) -> str:
    """The column's type for a bound value (an `INSERT ... SELECT` resolves untyped parameters as text)."""
    kind = type(journal_table.c[name].type).__name__.upper()
    kind = {"STRING": "text", "TEXT": "text", "BIGINTEGER": "bigint"}.get(kind, _CASTS.get(kind, kind))
    return f"%({name})s::{kind}"


_COLUMNS = ", ".join(_WRITTEN)
_VALUES = ", ".join(_cast(name) for name in _WRITTEN)
_INSERT = f"INSERT INTO tether_journal ({_COLUMNS}) VALUES ({_VALUES}) RETURNING id"
_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"
_NO_INTENT_YET = "NOT EXISTS (SELECT 1 FROM tether_journal WHERE kind = 'intent' AND idempotency_key = %(idempotency_key)s)"
_REFILL = "LEAST(%(t_calls)s, tokens + GREATEST(0.0, %(t_now)s - updated) * %(t_rate)s)"  # as `TokenBucket`
_TOKEN = (  # the usual case: the bucket exists and holds a token
    f"UPDATE tether_rate_limits SET tokens = {_REFILL} - 1, updated = %(t_now)s "
    f"WHERE key = %(t_key)s AND {_REFILL} >= 1 RETURNING 1"
)


def _fast(*, claim: bool, take: bool) -> str:
    """One statement: take the token (if `take`), insert the entry (if a claim: only if no intent has its key,
    and only with the token); returns (token taken, the new entry's id or NULL)."""
    conditions = (["EXISTS (SELECT 1 FROM token)"] if take else []) + ([_NO_INTENT_YET] if claim else [])
    insert = f"INSERT INTO tether_journal ({_COLUMNS}) SELECT {_VALUES} WHERE {' AND '.join(conditions)} RETURNING id"
    if not take:
        return f"WITH new AS ({insert}) SELECT true, (SELECT id FROM new)"
    return f"WITH token AS ({_TOKEN}), new AS ({insert}) SELECT EXISTS (SELECT 1 FROM token), (SELECT id FROM new)"


_CLAIM = _fast(claim=True, take=False)
_CLAIM_TAKING = _fast(claim=True, take=True)
_APPEND_TAKING = _fast(claim=False, take=True)

_ENTRY_COLUMNS = ", ".join(ENTRY_FIELDS)
_LATEST_INTENT = (
    f"SELECT {_ENTRY_COLUMNS} FROM tether_journal WHERE kind = 'intent' AND idempotency_key = %s "
    "ORDER BY id DESC LIMIT 1"
)
_COMPLETION = (
    f"SELECT {_ENTRY_COLUMNS} FROM tether_journal WHERE intent_id = %s AND kind IN ('result', 'resolution') "
    "ORDER BY id DESC LIMIT 1"
)
_BUCKET = "SELECT tokens, updated FROM tether_rate_limits WHERE key = %s FOR UPDATE"
_NEW = Lookup("new")  # frozen: one for every new key
_IDLE = 0
"""libpq's `PQTRANS_IDLE`: no transaction open."""
_SAVE_BUCKET = (
    "INSERT INTO tether_rate_limits (key, tokens, updated) VALUES (%s, %s, %s) "
    "ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, updated = excluded.updated"
)


class PostgresWriter:
    """The journal's writes on PostgreSQL over one psycopg connection (autocommit, explicit transactions),
    used under a lock: called from worker threads, one write at a time; and from an event loop over an async
    connection (`append_async`, `claim_async`, `write_batch_async`), one write at a time too, kept from one
    loop to the next."""

    def __init__(self, engine: Engine):
        self._conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._lock = threading.Lock()
        self._connection: Any = None
        self._async: Any = None
        """A `psycopg.AsyncConnection` on `_async_loop`, for `append_async` and `claim_async`."""
        self._async_loop: asyncio.AbstractEventLoop | None = None
        self._async_lock: asyncio.Lock | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._closed = False
        """`close()` was called: a connection made beside after it is closed, not kept (nothing would)."""

    async def append_async(
        self, entry: JournalEntry, *, take: RateToken | None = None, connect: bool = True
    ) -> JournalEntry:
        """`append` from the running event loop over a connection of its own: the same round trip, no worker
        thread. `WouldWait` (nothing written) if another thread's running loop holds that connection. Like a
        write in a worker thread, it is not cancelled part way: it ends (with the entry's id set, if written),
        then the caller's cancellation goes on. `connect=False`: if the loop has no connection yet, start
        making it beside and raise `WouldWait` (the caller writes in a thread meanwhile)."""
        return await _shielded(self._append_async(entry, take, connect))

    async def claim_async(
        self, intent: JournalEntry, *, take: RateToken | None = None, connect: bool = True
    ) -> Lookup:
        """`claim` from the running event loop (see `append_async`)."""
        return await _shielded(self._claim_async(intent, take, connect))

    async def write_batch_async(
        self, writes: Sequence[Write], *, connect: bool = True
    ) -> list[Lookup | JournalEntry | Exception]:
        """`write_batch` from the running event loop (see `append_async`): the batch's pipeline over the loop's
        connection; the rare write it did not make (a key with an intent, a missing or empty bucket) then
        in a thread, as `claim_async` does."""
        return await _shielded(self._write_batch_async(writes, connect))

    async def _write_batch_async(
        self, writes: Sequence[Write], connect: bool
    ) -> list[Lookup | JournalEntry | Exception]:
        locks, statements = _batch_plan(writes)
        async with self._connected(connect) as connection:
            rows = await _pipeline_async(connection, locks, statements)
        if _batch_done(statements, rows):
            return _batch_rest(None, writes, statements, rows)
        rest = functools.partial(_batch_rest, writes=writes, statements=statements, rows=rows)
        try:
            return await anyio.to_thread.run_sync(self._write, rest)
        except Exception as failed:  # e.g. no connection for the rest: what the pipeline committed stands
            return _batch_rest(None, writes, statements, rows, failed=failed)

    async def _append_async(self, entry: JournalEntry, take: RateToken | None, connect: bool) -> JournalEntry:
        params = _params(entry)
        if take is None:
            async with self._connected(connect) as connection:
                cursor = await connection.execute(_INSERT, params)
                entry.id = int((await cursor.fetchone())[0])
            return entry
        params.update(_token_params(take, time.time()))
        async with self._connected(connect) as connection:
            locks = [_bucket_lock(take.key)]
            ((taken, new_id),) = await _pipeline_async(connection, locks, [(_APPEND_TAKING, params)])
        if not taken:  # the bucket is missing or empty: the rest as `append` does it, in a thread
            rest = functools.partial(_append_rest, entry=entry, params=params, take=take)
            await anyio.to_thread.run_sync(self._write, rest)
            return entry
        entry.id = int(new_id)
        return entry

    async def _claim_async(self, intent: JournalEntry, take: RateToken | None, connect: bool) -> Lookup:
        params, locks, sql = _claim_plan(intent, take)
        async with self._connected(connect) as connection:
            ((taken, new_id),) = await _pipeline_async(connection, locks, [(sql, params)])
        if new_id is not None:
            intent.id = int(new_id)
            return _NEW
        # the rest as `claim` does it, in a thread
        rest = functools.partial(
            _claim_rest, intent=intent, params=params, locks=locks, take=None if taken else take
        )
        return await anyio.to_thread.run_sync(self._write, rest)

    @contextlib.asynccontextmanager
    async def _connected(self, connect: bool) -> AsyncIterator[Any]:
        """The running loop's connection, one write at a time; made on first use, and kept for a new loop
        once the one that had it has stopped (each `anyio.run` is a new loop; see `_adopt`). Without
        `connect`, a loop with no connection yet gets one made beside (`WouldWait` meanwhile)."""
        loop = asyncio.get_running_loop()
        if self._async_loop is not loop:
            if self._async_loop is not None and self._async_loop.is_running():  # another thread's loop
                raise WouldWait
            self._async_loop, self._async_lock, self._connecting = loop, asyncio.Lock(), None
            self._adopt()
        assert self._async_lock is not None
        if not connect and not _usable(self._async):
            if self._connecting is None or self._connecting.done():
                self._connecting = loop.create_task(self._connect_beside(self._async_lock))
            raise WouldWait
        async with self._async_lock:
            connection = self._async
            if not _usable(connection):
                connection = self._async = await _connect(self._conninfo)
            try:
                yield connection
            except Exception:
                if not connection.closed and connection.info.transaction_status != 0:  # not idle
                    with contextlib.suppress(Exception):  # the connection itself may be what failed
                        await connection.execute("ROLLBACK")
                raise
            except BaseException:  # cancelled part way: the server rolls back what the connection leaves
                self._drop_async()
                raise

    def _adopt(self) -> None:
        """Keep the connection for a new loop if the last one left it idle. psycopg ties an
        `AsyncConnection` to no loop: each wait registers with the loop running it, and its lock would bind
        to a loop only if two tasks contended for it (`_async_lock` lets one in at a time; a fresh lock
        all the same). A connection a loop left part way through a write is dropped: the server rolls
        that transaction back, as when a write is cancelled."""
        connection = self._async
        if _usable(connection) and _idle(connection):
            connection.lock = asyncio.Lock()
        else:
            self._drop_async()

    async def _connect_beside(self, lock: asyncio.Lock) -> None:
        """Make the loop's connection while its writes go on in threads; if that fails, a later write tries
        again."""
        with contextlib.suppress(Exception):
            async with lock:
                if not _usable(self._async):
                    connection = await _connect(self._conninfo)
                    if self._closed:  # closed while it was being made: left open, it would leak
                        connection.pgconn.finish()
                    else:
                        self._async = connection

    def _drop_async(self) -> None:
        """Close the async connection from any thread (libpq's own call: no loop needed)."""
        connection, self._async = self._async, None
        if connection is not None and not connection.closed:
            connection.pgconn.finish()

    def append(self, entry: JournalEntry, *, take: RateToken | None = None) -> JournalEntry:
        self._write(lambda connection: _append(connection, entry, take))
        return entry

    def claim(self, intent: JournalEntry, *, take: RateToken | None = None) -> Lookup:
        return self._write(lambda connection: _claim(connection, intent, take))

    def write_batch(self, writes: Sequence[Write]) -> list[Lookup | JournalEntry | Exception]:
        """Claims and appends with one commit for those that take the fast path (most): see the module."""
        return self._write(lambda connection: _batch(connection, writes))

    def take(self, key: str, limit: RateLimit, now: float) -> float:
        """A token from the rate-limit bucket `key` (see `SqlRateLimits`): 0, or the seconds until one is free."""
        return self._write(lambda connection: _take_quickly(connection, key, limit, now))

    def close(self) -> None:
        self._closed = True
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
        self._drop_async()

    def _write(self, work: Callable[[Any], _T]) -> _T:
        with self._lock:
            connection = self._connection
            if connection is None or connection.closed or connection.broken:  # first use, or lost
                import psycopg  # the `postgres` extra

                connection = self._connection = psycopg.connect(self._conninfo, autocommit=True)
            try:
                return work(connection)
            except BaseException:
                if not connection.closed and connection.info.transaction_status != 0:  # not idle
                    with contextlib.suppress(Exception):  # the connection itself may be what failed
                        connection.execute("ROLLBACK")
                raise


def _params(entry: JournalEntry) -> dict[str, Any]:
    params = dict(zip(_WRITTEN, dumped(entry), strict=True))  # JSON columns as JSON text, cast in SQL
    params["repaired"] = entry.repaired  # SQLite's integer; PostgreSQL's boolean
    return params


def _token_params(take: RateToken, now: float) -> dict[str, Any]:
    limit = take.limit
    return {
        "t_calls": float(limit.calls),
        "t_now": now,
        "t_rate": limit.calls / limit.per_seconds,
        "t_key": take.key,
    }


def _bucket_lock(key: str) -> str:
    return f"tether-rate:{key}"


def _pipeline(connection: Any, locks: Sequence[str], statements: Sequence[tuple[str, Any]]) -> list[Any]:
    """`BEGIN`, the advisory locks, `statements`, `COMMIT`: one round trip; each statement's first row.
    Raises `OutcomeUnknown` if it failed once the `COMMIT` was sent and may have committed (see
    `_may_have_committed`); any other error leaves nothing committed."""
    committing = False
    try:
        with connection.pipeline():
            connection.execute("BEGIN")
            for key in locks:
                connection.execute(_LOCK, (key,))
            cursors = [connection.execute(sql, params) for sql, params in statements]
            committing = True
            connection.execute("COMMIT")
        return [cursor.fetchone() for cursor in cursors]
    except Exception as error:
        if _may_have_committed(connection, committing, error):
            raise _unknown(error) from error
        raise


def _may_have_committed(connection: Any, committing: bool, error: Exception) -> bool:
    """Whether a pipeline that failed with `error` may have committed its transaction: not if its `COMMIT`
    was never sent, nor if the server answered and the transaction is still open or aborted (`INTRANS`,
    `INERROR`: rolled back next), nor if the server refused the `COMMIT` itself (an error with an SQLSTATE,
    the connection idle). Otherwise it may have: the connection was lost once the `COMMIT` was sent (the
    server may have committed before it knew), or it committed and reading its results failed."""
    if not committing:
        return False
    if not _usable(connection):
        return True
    if connection.info.transaction_status != _IDLE:
        return False
    return getattr(error, "sqlstate", None) is None


def _unknown(error: Exception) -> OutcomeUnknown:
    return OutcomeUnknown(
        f"the journal's connection failed as it committed, it may have been written: {error}"
    )


def _usable(connection: Any) -> bool:
    return connection is not None and not connection.closed and not connection.broken


def _idle(connection: Any) -> bool:
    """No transaction open and no pipeline under way (libpq's `PQTRANS_IDLE`, `PQ_PIPELINE_OFF`)."""
    return connection.info.transaction_status == _IDLE and connection.pgconn.pipeline_status == 0


async def _connect(conninfo: str) -> Any:
    import psycopg  # the `postgres` extra

    return await psycopg.AsyncConnection.connect(conninfo, autocommit=True)


async def _shielded(write: Coroutine[Any, Any, _T]) -> _T:
    """`write`, which a cancellation of the caller does not interrupt (it is delivered after)."""
    with anyio.CancelScope(shield=True):
        return await write
    raise AssertionError("unreachable: a shielded scope cancels nothing")  # for the type checker


async def _pipeline_async(
    connection: Any, locks: Sequence[str], statements: Sequence[tuple[str, Any]]
) -> list[Any]:
    """`_pipeline` on an async connection."""
    committing = False
    try:
        async with connection.pipeline():
            await connection.execute("BEGIN")
            for key in locks:
                await connection.execute(_LOCK, (key,))
            cursors = [await connection.execute(sql, params) for sql, params in statements]
            committing = True
            await connection.execute("COMMIT")
        return [await cursor.fetchone() for cursor in cursors]
    except Exception as error:
        if _may_have_committed(connection, committing, error):
            raise _unknown(error) from error
        raise


def _append(connection: Any, entry: JournalEntry, take: RateToken | None) -> None:
    params = _params(entry)
    if take is None:
        entry.id = int(connection.execute(_INSERT, params).fetchone()[0])
        return
    params.update(_token_params(take, time.time()))
    ((taken, new_id),) = _pipeline(connection, [_bucket_lock(take.key)], [(_APPEND_TAKING, params)])
    if taken:
        entry.id = int(new_id)
        return
    _append_rest(connection, entry, params, take)


def _append_rest(connection: Any, entry: JournalEntry, params: dict[str, Any], take: RateToken) -> None:
    """An append whose token the fast statement did not take (the bucket is missing or empty)."""
    with _transaction(connection):
        connection.execute(_LOCK, (_bucket_lock(take.key),))
        _take_or_refuse(connection, take)
        entry.id = int(connection.execute(_INSERT, params).fetchone()[0])


def _claim_plan(intent: JournalEntry, take: RateToken | None) -> tuple[dict[str, Any], list[str], str]:
    """A claim's parameters, the advisory locks it takes (in order) and its fast statement."""
    key = intent.idempotency_key
    assert key is not None
    params = _params(intent)
    if take is None:
        return params, [key], _CLAIM
    params.update(_token_params(take, time.time()))
    return params, [_bucket_lock(take.key), key], _CLAIM_TAKING  # a bucket's lock before a key's, always


def _claim(connection: Any, intent: JournalEntry, take: RateToken | None) -> Lookup:
    params, locks, sql = _claim_plan(intent, take)
    ((taken, new_id),) = _pipeline(connection, locks, [(sql, params)])
    if new_id is not None:
        intent.id = int(new_id)
        return _NEW
    return _claim_rest(connection, intent, params, locks, None if taken else take)


def _claim_rest(
    connection: Any,
    intent: JournalEntry,
    params: dict[str, Any],
    locks: Sequence[str],
    take: RateToken | None,
) -> Lookup:
    """A claim the fast statement did not insert: a second transaction under the same locks."""
    with _transaction(connection):
        for lock in locks:
            connection.execute(_LOCK, (lock,))
        return _claim_slowly(connection, intent, params, take)


def _claim_slowly(
    connection: Any, intent: JournalEntry, params: dict[str, Any], take: RateToken | None
) -> Lookup:
    """The claim in the transaction `connection` is in, which holds the bucket's and the key's locks."""
    assert intent.idempotency_key is not None
    if take is not None:
        _take_or_refuse(connection, take)
    found = _lookup(connection, intent.idempotency_key)
    if may_run(found, intent):
        intent.id = int(connection.execute(_INSERT, params).fetchone()[0])
    return found


def _batch(connection: Any, writes: Sequence[Write]) -> list[Lookup | JournalEntry | Exception]:
    locks, statements = _batch_plan(writes)
    rows = _pipeline(connection, locks, statements)
    return _batch_rest(connection, writes, statements, rows)


def _batch_plan(writes: Sequence[Write]) -> tuple[list[str], list[tuple[str, Any]]]:
    """A batch's advisory locks (buckets' before keys', each sorted: no two writers deadlock) and its
    fast statements, one a write."""
    now = time.time()
    buckets = sorted({_bucket_lock(w.take.key) for w in writes if w.take is not None})
    keys = sorted({w.entry.idempotency_key for w in writes if w.claim and w.entry.idempotency_key})
    statements: list[tuple[str, Any]] = []
    for write in writes:
        params = _params(write.entry)
        if write.take is not None:
            params.update(_token_params(write.take, now))
        if write.claim:
            statements.append((_CLAIM if write.take is None else _CLAIM_TAKING, params))
        else:
            statements.append((_INSERT if write.take is None else _APPEND_TAKING, params))
    return [*buckets, *keys], statements


def _batch_done(statements: Sequence[tuple[str, Any]], rows: Sequence[Any]) -> bool:
    """Whether the batch's pipeline made every write (no write needs a second transaction)."""
    return all(
        (row[0] if sql is _INSERT else row[1]) is not None
        for (sql, _), row in zip(statements, rows, strict=True)
    )


def _batch_rest(
    connection: Any,
    writes: Sequence[Write],
    statements: Sequence[tuple[str, Any]],
    rows: Sequence[Any],
    failed: Exception | None = None,
) -> list[Lookup | JournalEntry | Exception]:
    """The batch's results once its pipeline committed; what the pipeline did not do, one write at a time
    on `connection` (unused when `_batch_done` or when it `failed`: then each of those writes fails with
    that). Never raises: the pipeline's writes are committed, so a write done here that fails fails alone
    (written again, the others would be there twice)."""
    results: list[Lookup | JournalEntry | Exception] = []
    for write, (sql, params), row in zip(writes, statements, rows, strict=True):
        new_id = row[0] if sql is _INSERT else row[1]
        if new_id is not None:
            write.entry.id = int(new_id)
            results.append(Lookup("new") if write.claim else write.entry)
            continue
        if failed is not None:
            results.append(failed)
            continue
        taken = sql is not _INSERT and bool(row[0])  # what the batch did not do, one write at a time
        take = None if taken else write.take
        try:
            with _transaction(connection):
                for lock in ([_bucket_lock(write.take.key)] if write.take is not None else []) + (
                    [write.entry.idempotency_key] if write.claim and write.entry.idempotency_key else []
                ):
                    connection.execute(_LOCK, (lock,))
                if write.claim:
                    results.append(_claim_slowly(connection, write.entry, params, take))
                else:
                    if take is not None:
                        _take_or_refuse(connection, take)
                    write.entry.id = int(connection.execute(_INSERT, params).fetchone()[0])
                    results.append(write.entry)
        except Exception as error:  # `RateLimited` (it wrote nothing), or this write's own failure
            results.append(error)
    return results


class _transaction:
    """`BEGIN` ... `COMMIT`, or `ROLLBACK` on any exception (a `RateLimited` too: it wrote nothing)."""

    def __init__(self, connection: Any):
        self._connection = connection

    def __enter__(self) -> None:
        self._connection.execute("BEGIN")

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self._connection.execute("COMMIT" if kind is None else "ROLLBACK")


def _take_or_refuse(connection: Any, take: RateToken) -> None:
    retry_after = _take(connection, take.key, take.limit, time.time())
    if retry_after:
        raise RateLimited(retry_after)


def _take(connection: Any, key: str, limit: RateLimit, now: float) -> float:
    """A token in the transaction `connection` is in, which holds the bucket's advisory lock."""
    row = connection.execute(_BUCKET, (key,)).fetchone()
    bucket = TokenBucket(limit, float(limit.calls), now) if row is None else TokenBucket(limit, *row)
    wait = bucket.take(now)
    if not wait:  # a refusal need not write: the bucket refills from the same point either way
        connection.execute(_SAVE_BUCKET, (key, bucket.tokens, bucket.updated))
    return wait


def _take_quickly(connection: Any, key: str, limit: RateLimit, now: float) -> float:
    """One round trip when the bucket exists and holds a token (the usual case), else `_take_slowly`."""
    (taken,) = _pipeline(
        connection, [_bucket_lock(key)], [(_TOKEN, _token_params(RateToken(key, limit), now))]
    )
    return 0.0 if taken is not None else _take_slowly(connection, key, limit, now)


def _take_slowly(connection: Any, key: str, limit: RateLimit, now: float) -> float:
    with _transaction(connection):
        connection.execute(_LOCK, (_bucket_lock(key),))
        return _take(connection, key, limit, now)


def _lookup(connection: Any, key: str) -> Lookup:
    row = connection.execute(_LATEST_INTENT, (key,)).fetchone()
    if row is None:
        return Lookup("new")
    intent = _load(row)
    done = connection.execute(_COMPLETION, (intent.id,)).fetchone()
    return completed(intent, _load(done) if done is not None else None)


def _load(row: Sequence[Any]) -> JournalEntry:
    values = dict(zip(ENTRY_FIELDS, row, strict=True))  # psycopg reads JSON columns as Python values
    values["annotations"] = tuple(values["annotations"] or ())
    values["repairs"] = tuple(values["repairs"] or ())
    values["extra"] = values["extra"] or {}
    values["repaired"] = bool(values["repaired"])
    return JournalEntry(**values)
