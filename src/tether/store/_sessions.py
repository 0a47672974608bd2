"""Conversations, kept in the same database as the journal so a crashed run can be resumed."""

from __future__ import annotations

import time
from typing import Any, cast

from pydantic import TypeAdapter
from sqlalchemy import (
    JSON,
    Column,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    func,
    select,
    text,
)

from tether.store._engine import open_engine, prepare, writing
from tether.store._entries import DEFAULT_URL
from tether.types import Message

__all__ = ["SessionStore"]

_metadata = MetaData()
_messages = Table(
    "tether_session_messages",
    _metadata,
    Column("session_id", String(256), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("message", JSON, nullable=False),
    Column("created_at", Float, nullable=False),
)
_SESSION_LOCK = text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")
_MESSAGE: TypeAdapter[Any] = TypeAdapter(cast("Any", Message))  # pyright reads the union alias as a value


class SessionStore:
    """Append-only message lists by session id; a SQLite file by default, PostgreSQL by URL.

    Pass the journal's engine (`SessionStore(journal.engine)`) to keep both in one database. Appends from
    many runs at once are safe: each takes the write lock before it reads where the session ends.
    """

    def __init__(self, target: str | Engine = DEFAULT_URL):
        self.engine = open_engine(target) if isinstance(target, str) else prepare(target)
        self._postgres = self.engine.dialect.name == "postgresql"
        _metadata.create_all(self.engine)

    def append(self, session_id: str, messages: list[Message]) -> None:
        """Add messages after those already stored for the session."""
        if not messages:
            return
        with writing(self.engine) as connection:
            if self._postgres:  # appends to one session wait for each other, as SQLite's write lock does
                connection.execute(_SESSION_LOCK, {"key": f"tether-session:{session_id}"})
            start = connection.execute(
                select(func.coalesce(func.max(_messages.c.seq), -1)).where(
                    _messages.c.session_id == session_id
                )
            ).scalar_one()
            now = time.time()
            connection.execute(
                _messages.insert(),
                [
                    {
                        "session_id": session_id,
                        "seq": start + 1 + i,
                        "message": _MESSAGE.dump_python(m, mode="json"),
                        "created_at": now,
                    }
                    for i, m in enumerate(messages)
                ],
            )

    def load(self, session_id: str) -> list[Message]:
        """The session's messages in order (empty for a new session)."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(_messages.c.message)
                .where(_messages.c.session_id == session_id)
                .order_by(_messages.c.seq)
            )
            return [_MESSAGE.validate_python(row.message) for row in rows]
