"""Meeting slots both people are free for, on both people's working hours, in UTC seconds.

All arithmetic is in UTC; each person's working hours are read in their own IANA zone through zoneinfo,
so a day that gains or loses an hour (DST) still starts and ends work at the local times it should.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

__all__ = ["STEP_S", "WorkingHours", "free_slots", "parse_instant", "time_window", "utc_seconds"]

STEP_S = 15 * 60
"""Slots start on the quarter hour."""

Interval = tuple[int, int]


@dataclass(frozen=True, slots=True)
class WorkingHours:
    """A person's working day: minutes after local midnight, in their IANA zone."""

    timezone: str
    start_min: int = 9 * 60
    end_min: int = 18 * 60

    def contains(self, start_s: int, end_s: int) -> bool:
        zone = ZoneInfo(self.timezone)
        start = datetime.fromtimestamp(start_s, zone)
        end = datetime.fromtimestamp(end_s, zone)
        end_min = end.hour * 60 + end.minute
        if end.date() != start.date():  # a meeting may end at midnight, not run over it
            if end_min or end.date() != start.date() + timedelta(days=1):
                return False
            end_min = 24 * 60
        return self.start_min <= start.hour * 60 + start.minute and end_min <= self.end_min


def free_slots(
    window: Interval,
    duration_s: int,
    busy: Sequence[Interval],
    hours: Sequence[WorkingHours],
    *,
    limit: int = 5,
) -> list[Interval]:
    """Up to `limit` slots of `duration_s` inside `window`, overlapping nothing in `busy`, inside everyone's
    working hours; earliest first."""
    start_s, end_s = window
    t = -(-start_s // STEP_S) * STEP_S  # the first quarter hour at or after the window's start
    found: list[Interval] = []
    while t + duration_s <= end_s and len(found) < limit:
        slot = (t, t + duration_s)
        if not any(b_start < slot[1] and slot[0] < b_end for b_start, b_end in busy) and all(
            h.contains(*slot) for h in hours
        ):
            found.append(slot)
        t += STEP_S
    return found


def parse_instant(text: str, zone: ZoneInfo) -> datetime | None:
    """An ISO 8601 date-time; one without an offset is read in `zone` (the zone the user spoke of)."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment


def time_window(start_s: int, end_s: int, zone: ZoneInfo) -> dict[str, str]:
    """A seed `TimeWindow`: ISO start and end with the offset of `zone` at each instant."""
    return {
        "start": datetime.fromtimestamp(start_s, zone).isoformat(),
        "end": datetime.fromtimestamp(end_s, zone).isoformat(),
    }


def utc_seconds(moment: datetime) -> int:
    return int(moment.astimezone(UTC).timestamp())
