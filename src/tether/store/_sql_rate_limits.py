"""`SqlRateLimits`: token buckets in the journal's database, shared by every executor that uses it."""

from __future__ import annotations

import time

from sqlalchemy import Column, Connection, Engine, Float, MetaData, String, Table, select, text

from tether.store._engine import writing
from tether.store._entries import WouldWait
from tether.store._postgres_writer import PostgresWriter
from tether.store._rate_limits import TokenBucket
from tether.store._sqlite_writer import SqliteWriter
from tether.types import RateLimit

__all__ = ["SqlRateLimits", "create_buckets", "take_token"]

_metadata = MetaData()
_buckets = Table(
    "tether_rate_limits",
    _metadata,
    Column("key", String, primary_key=True),  # a tool name and a principal id, of any length
    Column("tokens", Float, nullable=False),
    Column("updated", Float, nullable=False),
)
_LOCK = text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")


def create_buckets(engine: Engine) -> None:
    """Make the buckets' table if it is missing."""
    _metadata.create_all(engine)


class SqlRateLimits:
    """Buckets in a SQL database, on the wall clock (shared by processes, so not a monotonic one)."""

    blocking = True

    def __init__(
        self, engine: Engine, *, writer: SqliteWriter | None = None, pg_writer: PostgresWriter | None = None
    ):
        self.engine = engine
        self._writer = writer
        self._pg_writer = pg_writer
        create_buckets(engine)

    @property
    def inline(self) -> bool:
        """Whether `take` may be tried with `wait=False` on the caller's thread (see `SqlJournal.inline`)."""
        return self._writer is not None and self._writer.inline

    def take(self, key: str, limit: RateLimit, *, wait: bool = True) -> float:
        now = time.time()
        if self._writer is not None:  # SQLite: the journal's own connection, ~5x cheaper than SQLAlchemy
            return self._writer.take(key, limit, now, wait=wait)
        if not wait:
            raise WouldWait
        if self._pg_writer is not None:  # PostgreSQL: the journal's raw psycopg connection
            return self._pg_writer.take(key, limit, now)
        with writing(self.engine) as connection:  # SQLite: the write lock from the start
            return take_token(connection, key, limit, now)


def take_token(connection: Connection, key: str, limit: RateLimit, now: float) -> float:
    """Take a token from bucket `key` in the transaction `connection` is in (which must hold SQLite's write
    lock, see `writing`): 0, or the seconds until one is free."""
    if connection.dialect.name == "postgresql":  # one taker per bucket at a time, until commit
        connection.execute(_LOCK, {"key": f"tether-rate:{key}"})
    row = connection.execute(
        select(_buckets.c.tokens, _buckets.c.updated).where(_buckets.c.key == key)
    ).first()
    bucket = TokenBucket(limit, float(limit.calls), now) if row is None else TokenBucket(limit, *row)
    retry_after = bucket.take(now)
    values = {"tokens": bucket.tokens, "updated": bucket.updated}
    if retry_after:  # a refusal need not write: the bucket refills from the same point either way
        return retry_after
    if row is None:
        connection.execute(_buckets.insert().values(key=key, **values))
    else:
        connection.execute(_buckets.update().where(_buckets.c.key == key).values(**values))
    return retry_after
