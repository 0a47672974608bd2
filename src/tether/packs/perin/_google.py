"""`GoogleCalendar`: a member's Google Calendar as a `CalendarAdapter`, over the google pack's client.

Free/busy comes from Calendar's `freebusy.query`; a hold is a *tentative* event whose id is derived from the
session and the member (`tether.packs.google.event_id`), so a retried hold cannot create a second event;
committing makes it *confirmed*, releasing deletes it. Google has no transaction spanning the check and the
insert: the hold checks free/busy just before inserting, which narrows a race with another app booking the
same time but cannot close it as tether's own calendar does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tether.packs.perin._calendars import Interval

__all__ = ["GoogleCalendar"]


class GoogleCalendar:
    """One member's Google Calendar (`network.use_calendar(user_id, GoogleCalendar(api))`).

    Args:
        api: The google pack's client (`tether.packs.google.GoogleApi`), signed in as that member.
        calendar_id: Which of their calendars (default: their primary one).
    """

    def __init__(self, api: Any, calendar_id: str = "primary"):
        self.api = api
        self.calendar_id = calendar_id

    def busy(self, user_id: str, start_s: int, end_s: int) -> list[Interval]:
        body = {"timeMin": _rfc3339(start_s), "timeMax": _rfc3339(end_s), "items": [{"id": self.calendar_id}]}
        found: dict[str, Any] = self.api.resource("calendar", "v3", "freebusy").query(body=body).execute()
        periods: list[dict[str, str]] = found.get("calendars", {}).get(self.calendar_id, {}).get("busy", [])
        return [(_seconds(p["start"]), _seconds(p["end"])) for p in periods]

    def hold(self, user_id: str, slot: Interval, title: str, session_id: str) -> str | None:
        from tether.packs.google import event_id  # the google extra

        if self.busy(user_id, *slot):
            return None
        hold_id = event_id(f"perin:{session_id}:{user_id}")
        event = {
            "id": hold_id,
            "summary": title,
            "status": "tentative",
            "start": {"dateTime": _rfc3339(slot[0])},
            "end": {"dateTime": _rfc3339(slot[1])},
        }
        self._events().insert(calendarId=self.calendar_id, body=event).execute()
        return hold_id

    def commit(self, hold_id: str) -> None:
        body = {"status": "confirmed"}
        self._events().patch(calendarId=self.calendar_id, eventId=hold_id, body=body).execute()

    def release(self, hold_id: str) -> None:
        self._events().delete(calendarId=self.calendar_id, eventId=hold_id).execute()

    def _events(self) -> Any:
        return self.api.resource("calendar", "v3", "events")


def _rfc3339(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _seconds(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())
