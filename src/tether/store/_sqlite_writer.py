"""The SQLite journal's hot path on the raw DB-API connection: ~5x less overhead per write than SQLAlchemy.

Only `append`, `claim` (the two writes every call makes) and `take` (a rate-limit token) go this way; reads
stay on SQLAlchemy. One
connection, used under a lock, in autocommit mode with explicit `BEGIN IMMEDIATE`, so a claim's lookup and
insert are one atomic step for every process sharing the file. Values are stored exactly as SQLAlchemy's
JSON and Boolean types store them, so either side reads what the other wrote.
"""

from __future__ import annotations

import json
import threading
from typing import Any, cast

from sqlalchemy import Engine

from tether.store._entries import ENTRY_FIELDS, JournalEntry, Lookup
from tether.store._journal import completed, may_run
from tether.store._rate_limits import TokenBucket
from tether.types import RateLimit

__all__ = ["SqliteWriter"]

_JSON = frozenset({"arguments", "annotations", "repairs", "envelope", "extra"})
_COLUMNS = ", ".join(ENTRY_FIELDS)
_WRITTEN = tuple(name for name in ENTRY_FIELDS if name != "id")
_INSERT = f"INSERT INTO tether_journal ({', '.join(_WRITTEN)}) VALUES ({', '.join('?' for _ in _WRITTEN)})"
_LATEST_INTENT = f"SELECT {_COLUMNS} FROM tether_journal WHERE kind = 'intent' AND idempotency_key = ? ORDER BY id DESC LIMIT 1"
_COMPLETION = (
    f"SELECT {_COLUMNS} FROM tether_journal WHERE intent_id = ? AND kind IN ('result', 'resolution') "
    "ORDER BY id DESC LIMIT 1"
)

_BUCKET = "SELECT tokens, updated FROM tether_rate_limits WHERE key = ?"
_SAVE_BUCKET = "INSERT OR REPLACE INTO tether_rate_limits (key, tokens, updated) VALUES (?, ?, ?)"


class SqliteWriter:
    def __init__(self, engine: Engine):
        self._connection: Any = engine.raw_connection()  # autocommit: the engine's connect hook set it
        self._lock = threading.Lock()

    def append(self, entry: JournalEntry) -> JournalEntry:
        with self._lock:
            self._begin()
            try:
                self._insert(entry)
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")
        return entry

    def claim(self, intent: JournalEntry) -> Lookup:
        assert intent.idempotency_key is not None
        with self._lock:
            self._begin()
            try:
                found = self._lookup(intent.idempotency_key)
                if may_run(found, intent):
                    self._insert(intent)
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")
        return found

    def take(self, key: str, limit: RateLimit, now: float) -> float:
        """A token from the rate-limit bucket `key` (see `SqlRateLimits`), in one write transaction."""
        with self._lock:
            self._begin()
            try:
                row = self._connection.execute(_BUCKET, (key,)).fetchone()
                bucket = (
                    TokenBucket(limit, float(limit.calls), now) if row is None else TokenBucket(limit, *row)
                )
                wait = bucket.take(now)
                self._connection.execute(_SAVE_BUCKET, (key, bucket.tokens, bucket.updated))
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")
        return wait

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def _begin(self) -> None:
        self._connection.execute("BEGIN IMMEDIATE")

    def _insert(self, entry: JournalEntry) -> None:
        values = [_dump(name, getattr(entry, name)) for name in _WRITTEN]
        entry.id = int(self._connection.execute(_INSERT, values).lastrowid)

    def _lookup(self, key: str) -> Lookup:
        row = self._connection.execute(_LATEST_INTENT, (key,)).fetchone()
        if row is None:
            return Lookup("new")
        intent = _load(row)
        done = self._connection.execute(_COMPLETION, (intent.id,)).fetchone()
        return completed(intent, _load(done) if done is not None else None)


def _dump(name: str, value: Any) -> Any:
    if name in _JSON:
        return json.dumps(list(cast("tuple[Any, ...]", value)) if isinstance(value, tuple) else value)
    if name == "repaired":
        return int(value)
    return value


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
