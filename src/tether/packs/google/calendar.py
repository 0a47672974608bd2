"""Calendar: calendar_list, calendar_events, calendar_create, calendar_update, calendar_delete.

A retried calendar_create never double-books: the event's id is derived from the call's tether idempotency
key (its calendar, summary, start and end, per principal), so Google itself refuses a second insert with
409, and the tool then answers with the event the first attempt made. Event ids are base32hex (`0-9a-v`).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from tether.packs.google._errors import GoogleFailure, error_envelope
from tether.packs.google._kit import Kit, creation_key, page_size
from tether.tools import Tool, ToolContext
from tether.types import ErrorCode, ErrorEnvelope

__all__ = ["calendar_tools", "event_id"]

_READ = ("calendar.events.readonly",)
_WRITE = ("calendar.events",)
_CREATE_FIELDS = ("calendarId", "summary", "start", "end")
_EVENT_KEYS = ("id", "status", "summary", "description", "location", "start", "end", "attendees", "htmlLink")


def event_id(key: str) -> str:
    """A Calendar event id for an idempotency key: base32hex of its digest, lower case, 32 characters."""
    digest = hashlib.sha256(key.encode()).digest()[:20]
    return base64.b32hexencode(digest).decode().lower().rstrip("=")


def when(value: str, time_zone: str | None) -> dict[str, str]:
    """`2026-05-01` is an all-day date; anything longer is an RFC 3339 date-time."""
    if len(value) == 10:
        return {"date": value}
    out = {"dateTime": value}
    if time_zone:
        out["timeZone"] = time_zone
    return out


def calendar_tools(kit: Kit) -> list[Tool[..., Any]]:
    def events() -> Any:
        return kit.api.resource("calendar", "v3", "events")

    @kit.tool("calendar_list", ("calendar.readonly",), "none")
    def calendar_list() -> dict[str, Any]:
        """List the user's calendars (their ids are what calendar_events takes)."""
        found = kit.api.resource("calendar", "v3", "calendarList").list().execute()
        keys = ("id", "summary", "primary", "accessRole", "timeZone")
        return {"calendars": [{k: c[k] for k in keys if k in c} for c in found.get("items", [])]}

    @kit.tool("calendar_events", _READ, "none")
    def calendar_events(
        calendarId: str = "primary",
        timeMin: str | None = None,
        timeMax: str | None = None,
        query: str | None = None,
        maxResults: int = 25,
        pageToken: str | None = None,
    ) -> dict[str, Any]:
        """List events in time order (recurring events expanded).

        Args:
            calendarId: The calendar (`primary` is the user's own).
            timeMin: Events ending after this RFC 3339 time, e.g. `2026-05-01T00:00:00Z`.
            timeMax: Events starting before this RFC 3339 time.
            query: Only events matching these words.
            maxResults: How many (1-100).
            pageToken: The `nextPageToken` of the previous page.
        """
        params: dict[str, Any] = {
            "calendarId": calendarId,
            "singleEvents": True,
            "orderBy": "startTime",
            "maxResults": page_size(maxResults),
        }
        optional = {"timeMin": timeMin, "timeMax": timeMax, "q": query, "pageToken": pageToken}
        params.update({k: v for k, v in optional.items() if v})
        found = events().list(**params).execute()
        out: dict[str, Any] = {"events": [_event(e) for e in found.get("items", [])]}
        if found.get("nextPageToken"):
            out["nextPageToken"] = found["nextPageToken"]
        return out

    @kit.tool("calendar_create", _WRITE, "mutating", idempotency_fields=_CREATE_FIELDS)
    def calendar_create(
        summary: str,
        start: str,
        end: str,
        calendarId: str = "primary",
        description: str | None = None,
        location: str | None = None,
        attendees: list[str] | None = None,
        timeZone: str | None = None,
        context: ToolContext | None = None,
    ) -> dict[str, Any]:
        """Create an event; a retried call answers with the event already made, never a second one.

        Args:
            summary: The event's title.
            start: RFC 3339 start, e.g. `2026-05-01T12:00:00+03:00`, or a date `2026-05-01` for all day.
            end: RFC 3339 end (or the day after an all-day event).
            calendarId: The calendar (`primary` is the user's own).
            description: Notes.
            location: Where.
            attendees: Email addresses to invite.
            timeZone: An IANA time zone for start and end, e.g. `Asia/Jerusalem`.
        """
        arguments = {"calendarId": calendarId, "summary": summary, "start": start, "end": end}
        eid = event_id(creation_key(context, "calendar_create", _CREATE_FIELDS, arguments))
        body: dict[str, Any] = {
            "id": eid,
            "summary": summary,
            "start": when(start, timeZone),
            "end": when(end, timeZone),
        }
        if description:
            body["description"] = description
        if location:
            body["location"] = location
        if attendees:
            body["attendees"] = [{"email": a} for a in attendees]
        from googleapiclient.errors import HttpError  # the google extra

        try:
            created = events().insert(calendarId=calendarId, body=body).execute()
        except HttpError as error:
            response: Any = error.resp
            if int(response.status) != 409:
                raise
            existing = events().get(calendarId=calendarId, eventId=eid).execute()
            if existing.get("status") == "cancelled":
                raise GoogleFailure(_deleted_before(eid)) from None
            return {**_event(existing), "alreadyExisted": True}
        return {**_event(created), "alreadyExisted": False}

    @kit.tool("calendar_update", _WRITE, "idempotent")
    def calendar_update(
        eventId: str,
        summary: str | None = None,
        calendarId: str = "primary",
        start: str | None = None,
        end: str | None = None,
        description: str | None = None,
        location: str | None = None,
        timeZone: str | None = None,
    ) -> dict[str, Any]:
        """Change an event: only the fields given change.

        Args:
            eventId: The event's id (from calendar_events).
            summary: A new title.
            calendarId: The calendar (`primary` is the user's own).
            start: A new RFC 3339 start (or date).
            end: A new RFC 3339 end (or date).
            description: New notes.
            location: A new place.
            timeZone: An IANA time zone for start and end.
        """
        patch: dict[str, Any] = {}
        if summary is not None:
            patch["summary"] = summary
        if description is not None:
            patch["description"] = description
        if location is not None:
            patch["location"] = location
        if start is not None:
            patch["start"] = when(start, timeZone)
        if end is not None:
            patch["end"] = when(end, timeZone)
        if not patch:
            raise GoogleFailure(_nothing_to_change())
        updated = events().patch(calendarId=calendarId, eventId=eventId, body=patch).execute()
        return _event(updated)

    @kit.tool("calendar_delete", _WRITE, "mutating")
    def calendar_delete(eventId: str, calendarId: str = "primary", confirmed: bool = False) -> dict[str, Any]:
        """Delete an event (guests are not notified).

        Args:
            eventId: The event's id.
            calendarId: The calendar (`primary` is the user's own).
            confirmed: The user has approved deleting this event.
        """
        kit.confirm_first("calendar_delete", confirmed, f"Delete the calendar event {eventId}?")
        events().delete(calendarId=calendarId, eventId=eventId).execute()
        return {"id": eventId, "deleted": True}

    return [calendar_list, calendar_events, calendar_create, calendar_update, calendar_delete]


def _event(event: dict[str, Any]) -> dict[str, Any]:
    out = {k: event[k] for k in _EVENT_KEYS if k in event}
    if "attendees" in out:
        out["attendees"] = [
            {k: a[k] for k in ("email", "responseStatus") if k in a} for a in event["attendees"]
        ]
    return out


def _deleted_before(eid: str) -> ErrorEnvelope:
    return error_envelope(
        ErrorCode.CONFLICT,
        f"This exact event was created before and then deleted (event {eid}); it is not re-created silently.",
        recoverable=False,
        suggestion="Tell the user; if they want it again, change the summary or the time slightly.",
    )


def _nothing_to_change() -> ErrorEnvelope:
    return error_envelope(
        ErrorCode.INVALID_ARGS,
        "calendar_update needs at least one field to change (summary, start, end, description, location).",
        recoverable=True,
        suggestion="Call again with the fields to change.",
    )
