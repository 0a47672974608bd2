"""SQLAlchemy engines for the store: SQLite set up for many writers, and transactions that write.

Every SQLite engine the store uses (made here from a URL, or given by the caller) gets WAL, a busy timeout,
explicit `BEGIN`s, and 2 KB pages in a file it creates (`PAGE_SIZE`). A transaction that reads and then writes (a claim, a session append, a rate-limit
bucket) must take SQLite's write lock when it begins (`BEGIN IMMEDIATE`): a deferred transaction that
read under one snapshot cannot upgrade to a writer once another connection has written since, and SQLite
then fails at once with "database is locked", whatever the busy timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import ConnectionPoolEntry

__all__ = ["PAGE_SIZE", "open_engine", "prepare", "writing"]

_BUSY_TIMEOUT_S = 30
PAGE_SIZE = 2048
"""Bytes a page of a SQLite file the store creates (one made before keeps its own; SQLite's default is 4096).
Every page a commit changes is one WAL frame, written and later synced and copied back by a checkpoint: a
journaled call changes six (its rows' leaf, the three indexes' leaves, the rate-limit bucket, the leaf
again), and at 2 KB they cost ~8 µs less a call than at 4 KB; a value of more than a page spills over into
twice as many pages, which only large arguments and results pay."""


def open_engine(url: str, *, durable: bool = False) -> Engine:
    """An engine for `url`; for SQLite, `durable` chooses `synchronous=FULL` over `NORMAL`."""
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
    database = url.split("///", 1)[1] if "///" in url else ""
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": _BUSY_TIMEOUT_S})
    return prepare(engine, durable=durable)


def prepare(engine: Engine, *, durable: bool = False) -> Engine:
    """Set up a SQLite engine for concurrent writers (once; other databases are returned as they are)."""
    if engine.dialect.name != "sqlite" or event.contains(engine, "begin", _begin):
        return engine
    synchronous = "FULL" if durable else "NORMAL"

    @event.listens_for(engine, "connect")
    def _pragmas(connection: Any, record: ConnectionPoolEntry) -> None:  # pyright: ignore[reportUnusedFunction]
        connection.isolation_level = None  # the "begin" listener issues BEGIN itself
        cursor = connection.cursor()
        cursor.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new file's, before WAL writes its header
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_S * 1000}")
        cursor.close()

    if engine.url.database not in (None, "", ":memory:"):  # disposing would lose an in-memory database
        engine.pool.dispose()  # connections made before the listener was added would miss the pragmas
    event.listen(engine, "begin", _begin)
    return engine


@contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """A transaction that may read before it writes: on SQLite it holds the write lock from the start."""
    with engine.connect() as connection:
        connection = connection.execution_options(tether_immediate=True)
        with connection.begin():
            yield connection


def _begin(connection: Connection) -> None:
    immediate = connection.get_execution_options().get("tether_immediate", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
