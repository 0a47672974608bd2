"""Where a person's busy times and bookings live: `CalendarAdapter`, and tether's own `LocalCalendar`.

Booking is two-phase (seed 002): `hold` on every calendar, then `commit` every hold, or `release` them all
when one calendar refuses; a hold counts as busy from the moment it is made, so a racing booking of the
same time sees it.
"""

from __future__ import annotations

import uuid
from typing import Protocol

from sqlalchemy import Engine, and_, delete, insert, select, update

from tether.packs.perin._tables import events, users

__all__ = ["CalendarAdapter", "Interval", "LocalCalendar"]

Interval = tuple[int, int]
"""UTC seconds since the epoch: `(start, end)`, end exclusive."""


class CalendarAdapter(Protocol):
    """One calendar provider: free/busy, and the two phases of a booking."""

    def busy(self, user_id: str, start_s: int, end_s: int) -> list[Interval]:
        """Every busy interval (events, holds, bookings) of the user overlapping `[start_s, end_s)`."""
        ...

    def hold(self, user_id: str, slot: Interval, title: str, session_id: str) -> str | None:
        """Reserve `slot` if it is free (atomically with the check); the hold's id, or `None` if it is not."""
        ...

    def commit(self, hold_id: str) -> None:
        """Turn a hold into a booking."""
        ...

    def release(self, hold_id: str) -> None:
        """Give a hold up, committed or not (a rollback); releasing one that is gone does nothing."""
        ...


class LocalCalendar:
    """tether's own calendar, in the network's database: events are rows of `perin_events`."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def busy(self, user_id: str, start_s: int, end_s: int) -> list[Interval]:
        query = (
            select(events.c.start_s, events.c.end_s)
            .where(events.c.user_id == user_id, events.c.start_s < end_s, events.c.end_s > start_s)
            .order_by(events.c.start_s)
        )
        with self.engine.connect() as connection:
            return [(int(row.start_s), int(row.end_s)) for row in connection.execute(query)]

    def hold(self, user_id: str, slot: Interval, title: str, session_id: str) -> str | None:
        start_s, end_s = slot
        hold_id = uuid.uuid4().hex
        with self.engine.begin() as connection:
            # written first: the row lock (PostgreSQL) or write lock (SQLite) makes the check and the insert
            # below one step for every process booking this calendar
            bump = users.update().where(users.c.id == user_id)
            connection.execute(bump.values(calendar_version=users.c.calendar_version + 1))
            overlap = select(events.c.id).where(
                events.c.user_id == user_id, events.c.start_s < end_s, events.c.end_s > start_s
            )
            if connection.execute(overlap.limit(1)).first() is not None:
                return None
            row = {"id": hold_id, "user_id": user_id, "start_s": start_s, "end_s": end_s}
            connection.execute(
                insert(events).values(**row, status="hold", title=title, session_id=session_id)
            )
        return hold_id

    def commit(self, hold_id: str) -> None:
        with self.engine.begin() as connection:
            where = and_(events.c.id == hold_id, events.c.status == "hold")
            connection.execute(update(events).where(where).values(status="confirmed"))

    def release(self, hold_id: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(delete(events).where(events.c.id == hold_id, events.c.session_id.is_not(None)))
