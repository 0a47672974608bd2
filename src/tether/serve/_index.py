"""Who owns which session, for which agent, and whether a run holds it: a table beside the conversations.

Every worker on the same database sees the same index, so ownership, the one-run-per-session rule and
idempotent session creation hold across processes. A run holds its session by a lease it renews; a worker
that dies leaves a lease that expires, so the session does not stay locked.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import (
    Boolean,
    Column,
    Engine,
    Float,
    Index,
    MetaData,
    String,
    Table,
    Text,
    and_,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from tether.store import SessionStore
from tether.store.internal import storable_text
from tether.types import Message

__all__ = ["LEASE_S", "SerialSessionStore", "SessionIndex", "SessionRow", "Status"]

Status = Literal["idle", "running", "needs", "cancelled", "error"]
LEASE_S = 30.0
"""How long a run's hold on its session lasts without renewal."""

_metadata = MetaData()
_sessions = Table(
    "tether_serve_sessions",
    _metadata,
    Column("session_id", String(64), primary_key=True),
    Column("owner", String(256), nullable=False),
    Column("agent", String(256), nullable=False),
    Column("title", String(256), nullable=False, default=""),
    Column("status", String(16), nullable=False, default="idle"),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("lease_until", Float, nullable=False, default=0.0),
    Column("cancel_asked", Boolean, nullable=False, default=False),
    Column("idempotency_key", String(256), nullable=True),
    Index("tether_serve_sessions_owner", "owner", "updated_at"),
    Index("tether_serve_sessions_idempotency", "owner", "idempotency_key", unique=True),
)
_prompts = Table(
    "tether_serve_prompts",
    _metadata,
    Column("session_id", String(64), primary_key=True),
    Column("created_at", Float, primary_key=True),
    Column("content", Text, nullable=False),
)
"""What users posted, to tell their messages from those the loop adds (reminders, requests) in history."""


@dataclass(frozen=True, slots=True)
class SessionRow:
    session_id: str
    owner: str
    agent: str
    title: str
    status: Status
    created_at: float
    updated_at: float
    lease_until: float

    def public(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "agent": self.agent,
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "status": "running" if self.held() else self.status,
        }

    def held(self, now: float | None = None) -> bool:
        return self.lease_until > (time.time() if now is None else now)


_COLUMNS = [c for c in _sessions.c if c.name not in ("idempotency_key", "cancel_asked")]


class SessionIndex:
    """The sessions table. Blocking calls: the app runs them in a worker thread."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.writes: AbstractContextManager[Any] = (
            threading.Lock() if engine.dialect.name == "sqlite" else contextlib.nullcontext()
        )
        """Held by every write of this process to a SQLite database (see `SerialSessionStore`)."""
        _metadata.create_all(engine)

    def create(self, owner: str, agent: str, idempotency_key: str | None = None) -> tuple[SessionRow, bool]:
        """A new session (True), or the one this owner already created with the same idempotency key."""
        now = time.time()
        row = SessionRow(uuid.uuid4().hex, owner, agent, "", "idle", now, now, 0.0)
        try:
            with self.writes, self.engine.begin() as connection:
                connection.execute(
                    _sessions.insert().values(
                        session_id=row.session_id, owner=owner, agent=agent, title="", status="idle",
                        created_at=now, updated_at=now, lease_until=0.0, cancel_asked=False,
                        idempotency_key=idempotency_key,
                    )
                )  # fmt: skip
        except IntegrityError:
            if idempotency_key is None:
                raise
            with self.engine.connect() as connection:
                found = connection.execute(
                    select(*_COLUMNS).where(
                        _sessions.c.owner == owner, _sessions.c.idempotency_key == idempotency_key
                    )
                ).one()
            return SessionRow(*found), False
        return row, True

    def get(self, session_id: str) -> SessionRow | None:
        with self.engine.connect() as connection:
            found = connection.execute(
                select(*_COLUMNS).where(_sessions.c.session_id == session_id)
            ).one_or_none()
        return None if found is None else SessionRow(*found)

    def owned_by(self, owner: str, limit: int = 200) -> list[SessionRow]:
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(*_COLUMNS)
                .where(_sessions.c.owner == owner)
                .order_by(_sessions.c.updated_at.desc())
                .limit(limit)
            ).all()
        return [SessionRow(*r) for r in rows]

    def hold(self, session_id: str, prompt: str, title: str | None = None) -> bool:
        """Take the session for a run of `prompt` (what the user posted), unless another run (in any worker)
        holds it; the session is titled `title` if it has no title yet. Both are kept `storable_text` (no
        NUL, which PostgreSQL text cannot hold), as `prompts` returns them."""
        now = time.time()
        values: dict[str, Any] = {
            "status": "running", "lease_until": now + LEASE_S, "updated_at": now, "cancel_asked": False,
        }  # fmt: skip
        where = and_(_sessions.c.session_id == session_id, _sessions.c.lease_until <= now)
        with self.writes, self.engine.begin() as connection:
            if connection.execute(update(_sessions).where(where).values(**values)).rowcount != 1:
                return False
            if title:
                connection.execute(
                    update(_sessions)
                    .where(_sessions.c.session_id == session_id, _sessions.c.title == "")
                    .values(title=storable_text(title[:80]))
                )
            connection.execute(
                _prompts.insert().values(session_id=session_id, created_at=now, content=storable_text(prompt))
            )
        return True

    def prompts(self, session_id: str) -> list[str]:
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(_prompts.c.content)
                .where(_prompts.c.session_id == session_id)
                .order_by(_prompts.c.created_at)
            ).all()
        return [r.content for r in rows]

    def renew(self, session_ids: list[str]) -> None:
        """Extend the hold of these sessions' runs (all of one worker's, in one statement)."""
        if not session_ids:
            return
        with self.writes, self.engine.begin() as connection:
            connection.execute(
                update(_sessions)
                .where(_sessions.c.session_id.in_(session_ids))
                .values(lease_until=time.time() + LEASE_S)
            )

    def ask_cancel(self, session_id: str) -> bool:
        """Ask whichever worker runs the session to cancel its run; False when no run holds it."""
        now = time.time()
        with self.writes, self.engine.begin() as connection:
            return (
                connection.execute(
                    update(_sessions)
                    .where(_sessions.c.session_id == session_id, _sessions.c.lease_until > now)
                    .values(cancel_asked=True)
                ).rowcount
                == 1
            )

    def cancel_asked(self, session_ids: list[str]) -> list[str]:
        """Those of `session_ids` whose run another worker was asked to cancel."""
        if not session_ids:
            return []
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(_sessions.c.session_id).where(
                    _sessions.c.session_id.in_(session_ids), _sessions.c.cancel_asked.is_(True)
                )
            ).all()
        return [r.session_id for r in rows]

    def release(self, session_id: str, status: Status) -> None:
        now = time.time()
        with self.writes, self.engine.begin() as connection:
            connection.execute(
                update(_sessions)
                .where(_sessions.c.session_id == session_id)
                .values(status=status, lease_until=0.0, updated_at=now)
            )

    def release_all(self, session_ids: list[str], status: Status) -> None:
        if not session_ids:
            return
        with self.writes, self.engine.begin() as connection:
            connection.execute(
                update(_sessions)
                .where(_sessions.c.session_id.in_(session_ids))
                .values(status=status, lease_until=0.0, updated_at=time.time())
            )


class SerialSessionStore(SessionStore):
    """The conversations, whose appends take the index's write lock: on SQLite, a process's writers then
    queue on a lock instead of in SQLite's busy handler, whose sleeps (up to 100 ms each) made the first
    event of concurrent runs wait several times longer."""

    def __init__(self, index: SessionIndex):
        super().__init__(index.engine)
        self.writes = index.writes

    def append(self, session_id: str, messages: list[Message]) -> None:
        with self.writes:
            super().append(session_id, messages)
