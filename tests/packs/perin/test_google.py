"""A member on Google Calendar: free/busy from freebusy.query, and the two-phase booking as tentative then
confirmed events (or deleted on rollback), through the google pack's real client over mocked HTTP."""

import json
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("googleapiclient", reason="the google extra is not installed")

from googleapiclient.http import HttpMockSequence

from tether.packs.google import GoogleApi, event_id
from tether.packs.perin import GoogleCalendar
from tether.types import ErrorEnvelope, OkEnvelope

from .conftest import People

pytestmark = pytest.mark.anyio

WINDOW: dict[str, Any] = {"startWindow": "2026-03-27T12:00:00", "endWindow": "2026-03-27T14:00:00"}
DENTIST = {
    "calendars": {"primary": {"busy": [{"start": "2026-03-27T09:30:00Z", "end": "2026-03-27T10:00:00Z"}]}}
}
FREE: dict[str, Any] = {"calendars": {"primary": {"busy": []}}}


def ok(body: Any) -> tuple[dict[str, str], str]:
    return ({"status": "200"}, json.dumps(body))


def on_google(people: People, *responses: tuple[dict[str, str], str]) -> HttpMockSequence:
    """Aviad's calendar moves to Google (his tether calendar's dentist is dropped: Google has it)."""
    http = HttpMockSequence(list(responses))
    people.network.use_calendar(people.aviad, GoogleCalendar(GoogleApi(http=http)))
    return http


def respond(http: HttpMockSequence, *responses: tuple[dict[str, str], str]) -> None:
    mock: Any = http  # untyped: its queue of responses
    mock._iterable.extend(responses)


def sent(http: HttpMockSequence) -> list[tuple[str, str, Any]]:
    mock: Any = http  # untyped
    requests: list[tuple[str, str, Any, Any]] = mock.request_sequence
    return [
        (method, urlsplit(uri).path, json.loads(body) if body else None) for uri, method, body, _ in requests
    ]


async def test_proposals_use_aviads_google_free_busy(people: People) -> None:
    http = on_google(people, ok(DENTIST))
    envelope = await people.call("network_schedule_meeting", counterpart="Aviad", durationMins=30, **WINDOW)
    assert isinstance(envelope, OkEnvelope)
    assert [p["start"][11:16] for p in envelope.data["proposals"]] == ["12:00", "13:00", "13:15", "13:30"]
    [(method, path, body)] = sent(http)
    assert (method, path) == ("POST", "/calendar/v3/freeBusy")
    assert body == {
        "timeMin": "2026-03-27T09:00:00Z",
        "timeMax": "2026-03-27T11:00:00Z",
        "items": [{"id": "primary"}],
    }


async def test_confirming_holds_then_confirms_the_google_event(people: People) -> None:
    http = on_google(people, ok(DENTIST))
    proposed = await people.call("network_schedule_meeting", counterpart="Aviad", durationMins=30, **WINDOW)
    assert isinstance(proposed, OkEnvelope)
    session = proposed.data["sessionId"]
    hold = event_id(f"perin:{session}:{people.aviad}")
    respond(http, ok(FREE), ok({"id": hold}), ok({"id": hold}))
    confirmed = await people.call("network_confirm_meeting", sessionId=session, selectionIndex=0)
    assert isinstance(confirmed, OkEnvelope)
    requests = sent(http)[1:]
    assert [(m, p) for m, p, _ in requests] == [
        ("POST", "/calendar/v3/freeBusy"),
        ("POST", "/calendar/v3/calendars/primary/events"),
        ("PATCH", f"/calendar/v3/calendars/primary/events/{hold}"),
    ]
    assert requests[1][2] == {
        "id": hold,
        "summary": "Meeting (Perin)",
        "status": "tentative",
        "start": {"dateTime": "2026-03-27T09:00:00Z"},
        "end": {"dateTime": "2026-03-27T09:30:00Z"},
    }
    assert requests[2][2] == {"status": "confirmed"}
    assert people.network.bookings(people.dana) == [((1774602000, 1774603800), "confirmed")]


async def test_a_google_failure_rolls_both_calendars_back_and_the_session_stays_open(people: People) -> None:
    http = on_google(people, ok(DENTIST))
    proposed = await people.call("network_schedule_meeting", counterpart="Aviad", durationMins=30, **WINDOW)
    assert isinstance(proposed, OkEnvelope)
    session = proposed.data["sessionId"]
    hold = event_id(f"perin:{session}:{people.aviad}")
    failed = ({"status": "500"}, json.dumps({"error": {"code": 500, "message": "backend"}}))
    # the hold is made, the commit fails: the hold is deleted, Dana's booking removed
    respond(http, ok(FREE), ok({"id": hold}), failed, ({"status": "204"}, ""))
    envelope = await people.call("network_confirm_meeting", sessionId=session, selectionIndex=0)
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "CALENDAR_UNAVAILABLE"
    assert sent(http)[-1][:2] == ("DELETE", f"/calendar/v3/calendars/primary/events/{hold}")
    assert people.network.bookings(people.dana) == []
    # nothing is stuck: the session can be confirmed once Google answers again
    respond(http, ok(FREE), ok({"id": hold}), ok({"id": hold}))
    retried = await people.call("network_confirm_meeting", sessionId=session, selectionIndex=1)
    assert isinstance(retried, OkEnvelope)


async def test_a_busy_google_calendar_refuses_the_hold_and_releases_danas(people: People) -> None:
    http = on_google(people, ok(FREE))
    proposed = await people.call("network_schedule_meeting", counterpart="Aviad", durationMins=30, **WINDOW)
    assert isinstance(proposed, OkEnvelope)
    taken = {
        "calendars": {"primary": {"busy": [{"start": "2026-03-27T09:00:00Z", "end": "2026-03-27T09:30:00Z"}]}}
    }
    respond(http, ok(taken))
    envelope = await people.call(
        "network_confirm_meeting", sessionId=proposed.data["sessionId"], selectionIndex=0
    )
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "CONFLICT"
    assert people.network.bookings(people.dana) == []
