"""`Network`: Perin's people, connections, calendars, sessions, notifications and audit trail, in the
same database as tether's journal (so one URL configures both, and one backup holds both)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import insert, select, update

from tether.exceptions import NeedsInput, ToolError, UserError
from tether.packs.perin._calendars import CalendarAdapter, Interval, LocalCalendar
from tether.packs.perin._slots import WorkingHours, utc_seconds
from tether.packs.perin._tables import (
    audit,
    connections,
    events,
    metadata,
    notifications,
    sessions,
    transcript,
    users,
)
from tether.store import DEFAULT_URL, SqlJournal

__all__ = ["ALL_SCOPES", "Connection", "Network", "Notification", "SessionRow", "User"]

READ, PROPOSE = "calendar.availability.read", "calendar.events.propose"
WRITE_CONFIRM, WRITE_AUTO = "calendar.events.write.confirm", "calendar.events.write.auto"
ALL_SCOPES = frozenset({READ, PROPOSE, WRITE_CONFIRM, WRITE_AUTO})
"""The scopes a connection can grant (seed 002)."""


@dataclass(frozen=True, slots=True)
class User:
    id: str
    name: str
    email: str
    timezone: str
    hours: WorkingHours


@dataclass(frozen=True, slots=True)
class Connection:
    """What `counterpart` lets the user do with their calendar."""

    id: str
    counterpart: User
    status: str
    scopes: frozenset[str]


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: str
    initiator_id: str
    counterpart_id: str
    connection_id: str
    duration_mins: int
    timezone: str
    proposals: list[Interval]
    status: str
    created_s: int


@dataclass(frozen=True, slots=True)
class Notification:
    id: str
    kind: str
    message: str
    session_id: str | None
    actionable: bool
    resolved: bool
    created_s: int


class Network:
    """The scheduling network's data, in SQLite by default or PostgreSQL by URL.

    Args:
        url: A SQLAlchemy URL, as for `tether.store.SqlJournal`; the network's tables sit beside the journal's.
        clock: Now, as an aware datetime (tests pin "tomorrow").
    """

    def __init__(self, url: str = DEFAULT_URL, *, clock: Callable[[], datetime] | None = None):
        self.journal = SqlJournal(url)
        """The journal on the same database: give it to the `Executor` (rate limits live there too)."""
        self.engine = self.journal.engine
        metadata.create_all(self.engine)
        self.clock = clock or (lambda: datetime.now(UTC))
        self.local_calendar = LocalCalendar(self.engine)
        self._calendars: dict[str, CalendarAdapter] = {}

    def close(self) -> None:
        self.journal.close()

    def now_s(self) -> int:
        return utc_seconds(self.clock())

    # ------------------------------------------------------------------------------------------ people

    def add_user(
        self,
        name: str,
        email: str,
        timezone: str,
        *,
        user_id: str | None = None,
        work_start_min: int = 9 * 60,
        work_end_min: int = 18 * 60,
    ) -> str:
        """Add a person; returns their id, the id of the `Principal` acting for them (e.g. the principal an
        API key of `tether serve` stands for; default: a new random id)."""
        try:
            ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise UserError(
                f"{timezone!r} is not an IANA time zone: use a name such as 'Asia/Jerusalem'."
            ) from None
        user_id = user_id or uuid.uuid4().hex
        row = {"id": user_id, "name": name, "email": email.lower(), "timezone": timezone}
        hours = {"work_start_min": work_start_min, "work_end_min": work_end_min, "calendar_version": 0}
        with self.engine.begin() as connection:
            connection.execute(insert(users).values(**row, **hours))
        return user_id

    def user(self, user_id: str | None) -> User | None:
        if user_id is None:
            return None
        with self.engine.connect() as connection:
            row = connection.execute(select(users).where(users.c.id == user_id)).first()
        return None if row is None else _user(row)

    def connect(
        self, a: str, b: str, *, scopes: Iterable[str] = ALL_SCOPES, status: str = "active"
    ) -> tuple[str, str]:
        """Connect two people both ways, each granting the other `scopes`; the two connections' ids."""
        granted = " ".join(sorted(set(scopes)))
        ids = (uuid.uuid4().hex, uuid.uuid4().hex)
        with self.engine.begin() as connection:
            for cid, (user, other) in zip(ids, ((a, b), (b, a)), strict=True):
                row = {
                    "id": cid,
                    "user_id": user,
                    "counterpart_id": other,
                    "status": status,
                    "scopes": granted,
                }
                connection.execute(insert(connections).values(**row))
        return ids

    def update_connection(
        self,
        user_id: str,
        counterpart_id: str,
        *,
        status: str | None = None,
        scopes: Iterable[str] | None = None,
    ) -> None:
        """Change what `counterpart_id` grants `user_id` (e.g. a revoked scope, a paused connection)."""
        values: dict[str, Any] = {}
        if status is not None:
            values["status"] = status
        if scopes is not None:
            values["scopes"] = " ".join(sorted(set(scopes)))
        where = (connections.c.user_id == user_id) & (connections.c.counterpart_id == counterpart_id)
        with self.engine.begin() as connection:
            connection.execute(update(connections).where(where).values(**values))

    def connections_of(self, user_id: str) -> list[Connection]:
        """Everyone the user is connected with, whatever the connection's status."""
        query = select(
            connections.c.id.label("connection_id"), connections.c.status, connections.c.scopes, users
        ).join(users, users.c.id == connections.c.counterpart_id)
        with self.engine.connect() as connection:
            rows = connection.execute(query.where(connections.c.user_id == user_id)).all()
        return [
            Connection(
                id=row.connection_id,
                counterpart=_user(row),
                status=row.status,
                scopes=frozenset(row.scopes.split()),
            )
            for row in rows
        ]

    # --------------------------------------------------------------------------------------- calendars

    def use_calendar(self, user_id: str, adapter: CalendarAdapter) -> None:
        """Read and book this user's time through `adapter` (e.g. their Google Calendar) instead of tether's own."""
        self._calendars[user_id] = adapter

    def calendar(self, user_id: str) -> CalendarAdapter:
        return self._calendars.get(user_id, self.local_calendar)

    def add_busy(self, user_id: str, start: datetime, end: datetime, title: str = "Busy") -> None:
        """Put an event on the user's own (tether) calendar."""
        if start.tzinfo is None or end.tzinfo is None:
            raise UserError(
                "Network.add_busy needs aware datetimes, e.g. datetime(..., tzinfo=ZoneInfo('UTC'))."
            )
        row = {
            "id": uuid.uuid4().hex,
            "user_id": user_id,
            "start_s": utc_seconds(start),
            "end_s": utc_seconds(end),
        }
        with self.engine.begin() as connection:
            connection.execute(insert(events).values(**row, status="busy", title=title, session_id=None))

    def bookings(self, user_id: str) -> list[tuple[Interval, str]]:
        """The user's events made by Perin (holds and confirmed bookings) as `((start, end), status)`."""
        query = select(events).where(events.c.user_id == user_id, events.c.session_id.is_not(None))
        with self.engine.connect() as connection:
            rows = connection.execute(query.order_by(events.c.start_s)).all()
        return [((int(r.start_s), int(r.end_s)), r.status) for r in rows]

    # ---------------------------------------------------------------------------------------- sessions

    def create_session(
        self,
        initiator: User,
        connection: Connection,
        duration_mins: int,
        timezone: str,
        proposals: list[Interval],
    ) -> str:
        session_id = uuid.uuid4().hex
        row = {
            "id": session_id,
            "initiator_id": initiator.id,
            "counterpart_id": connection.counterpart.id,
            "connection_id": connection.id,
            "duration_mins": duration_mins,
            "timezone": timezone,
            "proposals": json.dumps(proposals),
            "status": "proposed",
            "created_s": self.now_s(),
        }
        with self.engine.begin() as c:
            c.execute(insert(sessions).values(**row))
        return session_id

    def session(self, session_id: str) -> SessionRow | None:
        with self.engine.connect() as connection:
            row = connection.execute(select(sessions).where(sessions.c.id == session_id)).first()
        if row is None:
            return None
        return SessionRow(
            id=row.id,
            initiator_id=row.initiator_id,
            counterpart_id=row.counterpart_id,
            connection_id=row.connection_id,
            duration_mins=int(row.duration_mins),
            timezone=row.timezone,
            proposals=[(int(start), int(end)) for start, end in json.loads(row.proposals)],
            status=row.status,
            created_s=int(row.created_s),
        )

    def move_session(self, session_id: str, from_status: str, to_status: str, **values: Any) -> bool:
        """Compare-and-set the session's status: `True` if this caller moved it (one caller wins a race)."""
        where = (sessions.c.id == session_id) & (sessions.c.status == from_status)
        with self.engine.begin() as connection:
            moved = connection.execute(update(sessions).where(where).values(status=to_status, **values))
        return moved.rowcount == 1

    def say(self, session_id: str, actor_id: str, text: str) -> None:
        """Add a line to the session's transcript."""
        row = {"session_id": session_id, "at_s": self.now_s(), "actor_id": actor_id, "text": text}
        with self.engine.begin() as connection:
            connection.execute(insert(transcript).values(**row))

    def transcript(self, session_id: str) -> list[tuple[str, str]]:
        """`(actor_id, text)` for every line of the session's transcript, in order."""
        query = select(transcript).where(transcript.c.session_id == session_id).order_by(transcript.c.id)
        with self.engine.connect() as connection:
            return [(r.actor_id, r.text) for r in connection.execute(query)]

    # ----------------------------------------------------------------------------------- notifications

    def notify(
        self,
        user_id: str,
        kind: str,
        message: str,
        *,
        session_id: str | None = None,
        actionable: bool = False,
    ) -> str:
        notification_id = uuid.uuid4().hex
        row = {"id": notification_id, "user_id": user_id, "kind": kind, "message": message}
        flags = {
            "session_id": session_id,
            "actionable": actionable,
            "resolved": False,
            "created_s": self.now_s(),
        }
        with self.engine.begin() as connection:
            connection.execute(insert(notifications).values(**row, **flags))
        return notification_id

    def notifications(self, user_id: str, *, include_resolved: bool = False) -> list[Notification]:
        query = select(notifications).where(notifications.c.user_id == user_id)
        if not include_resolved:
            query = query.where(notifications.c.resolved.is_(False))
        with self.engine.connect() as connection:
            rows = connection.execute(query.order_by(notifications.c.seq)).all()
        return [
            Notification(
                r.id, r.kind, r.message, r.session_id, bool(r.actionable), bool(r.resolved), r.created_s
            )
            for r in rows
        ]

    def resolve_notification(self, user_id: str, notification_id: str) -> bool | None:
        """Mark the user's notification resolved: `True`, `False` if it already was, `None` if the user has
        no such notification (someone else's is no different from none)."""
        mine = (notifications.c.id == notification_id) & (notifications.c.user_id == user_id)
        with self.engine.begin() as connection:
            moved = connection.execute(
                update(notifications).where(mine & notifications.c.resolved.is_(False)).values(resolved=True)
            )
            if moved.rowcount:
                return True
            exists = connection.execute(select(notifications.c.id).where(mine)).first()
        return False if exists is not None else None

    # ------------------------------------------------------------------------------------------- audit

    def audit(self, user_id: str, action: str, outcome: str, **detail: Any) -> None:
        """Record an action in the audit trail, whatever its outcome."""
        row = {"at_s": self.now_s(), "user_id": user_id, "action": action, "outcome": outcome}
        with self.engine.begin() as connection:
            connection.execute(
                insert(audit).values(**row, detail=json.dumps(detail, sort_keys=True, default=str))
            )

    @contextmanager
    def auditing(self, user_id: str, action: str) -> Iterator[None]:
        """Audit an action's refusal (its error code) or question (the fields it needs) as it leaves."""
        try:
            yield
        except ToolError as e:
            self.audit(user_id, action, "refused", code=e.code)
            raise
        except NeedsInput as e:
            self.audit(user_id, action, "needs", fields=sorted(e.needs))
            raise

    def audit_trail(self, user_id: str | None = None) -> list[tuple[str, str, str, dict[str, Any]]]:
        """`(user_id, action, outcome, detail)` for every audited action (of one user), oldest first."""
        query = select(audit).order_by(audit.c.id)
        if user_id is not None:
            query = query.where(audit.c.user_id == user_id)
        with self.engine.connect() as connection:
            return [(r.user_id, r.action, r.outcome, json.loads(r.detail)) for r in connection.execute(query)]


def _user(row: Any) -> User:
    hours = WorkingHours(row.timezone, row.work_start_min, row.work_end_min)
    return User(row.id, row.name, row.email, row.timezone, hours)
