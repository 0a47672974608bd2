"""Calendar tools through the real client; a retried create never double-books."""

import pytest

from tether.packs.google import event_id
from tether.types import ErrorEnvelope, NeedsEnvelope, OkEnvelope

from .conftest import FakeGoogle, Sent, google_error, reply

pytestmark = pytest.mark.anyio

CAL = "www.googleapis.com"
EVENTS = "/calendar/v3/calendars/primary/events"


async def test_calendar_list_lists_calendars(google: FakeGoogle) -> None:
    google.respond(reply(body={"items": [{"id": "primary", "summary": "Ana", "primary": True, "etag": "x"}]}))
    envelope = await google.call("calendar_list")
    assert envelope == OkEnvelope(data={"calendars": [{"id": "primary", "summary": "Ana", "primary": True}]})
    assert google.sent == [Sent("GET", CAL, "/calendar/v3/users/me/calendarList", {}, None)]


async def test_calendar_events_expands_recurring_events_in_time_order(google: FakeGoogle) -> None:
    event = {"id": "e1", "summary": "Standup", "start": {"dateTime": "2026-05-01T09:00:00Z"}, "etag": "x"}
    google.respond(reply(body={"items": [event]}))
    envelope = await google.call(
        "calendar_events", timeMin="2026-05-01T00:00:00Z", timeMax="2026-05-02T00:00:00Z"
    )
    assert envelope == OkEnvelope(
        data={"events": [{"id": "e1", "summary": "Standup", "start": {"dateTime": "2026-05-01T09:00:00Z"}}]}
    )
    assert google.sent == [
        Sent("GET", CAL, EVENTS, {"singleEvents": "true", "orderBy": "startTime", "maxResults": "25",
             "timeMin": "2026-05-01T00:00:00Z", "timeMax": "2026-05-02T00:00:00Z"}, None)
    ]  # fmt: skip


ARGS = {"summary": "Lunch with Bo", "start": "2026-05-01T12:00:00+03:00", "end": "2026-05-01T13:00:00+03:00"}


async def test_calendar_create_derives_the_event_id_from_the_idempotency_key(google: FakeGoogle) -> None:
    google.respond(reply(body={"id": "will-be-checked", "status": "confirmed", **ARGS}))
    await google.call("calendar_create", **ARGS, timeZone="Asia/Jerusalem", attendees=["bo@example.com"])
    [sent] = google.sent
    assert (sent.method, sent.path) == ("POST", EVENTS)
    eid = sent.body["id"]
    assert len(eid) == 32
    assert set(eid) <= set("0123456789abcdefghijklmnopqrstuv")
    assert sent.body == {
        "id": eid,
        "summary": "Lunch with Bo",
        "start": {"dateTime": "2026-05-01T12:00:00+03:00", "timeZone": "Asia/Jerusalem"},
        "end": {"dateTime": "2026-05-01T13:00:00+03:00", "timeZone": "Asia/Jerusalem"},
        "attendees": [{"email": "bo@example.com"}],
    }


async def test_a_retried_create_gets_409_from_google_and_answers_with_the_first_event(
    google: FakeGoogle,
) -> None:
    google.respond(reply(body={"id": "x", "status": "confirmed", "summary": ARGS["summary"]}))
    await google.call("calendar_create", **ARGS)
    eid = google.sent[0].body["id"]
    # a fresh executor (the journal lost the first result) and a new call id: the same event id is sent
    google.executor = type(google.executor)(google.tools)
    existing = {"id": eid, "status": "confirmed", "summary": ARGS["summary"]}
    google.respond(({"status": "409"}, google_error(409, "The requested identifier already exists.", "duplicate")),
                   reply(body=existing))  # fmt: skip
    again = await google.call("calendar_create", call_id="c2", **ARGS)
    assert again == OkEnvelope(data={**existing, "alreadyExisted": True})
    assert google.sent[1].body["id"] == eid
    assert google.sent[2] == Sent("GET", CAL, f"{EVENTS}/{eid}", {}, None)


async def test_the_same_executor_replays_a_repeated_create_without_calling_google(google: FakeGoogle) -> None:
    google.respond(reply(body={"id": "x", "status": "confirmed"}))
    first = await google.call("calendar_create", **ARGS)
    second = await google.call("calendar_create", call_id="c2", **ARGS)
    assert first == second
    assert len(google.sent) == 1


def test_event_ids_differ_per_key_and_use_calendars_alphabet() -> None:
    assert event_id("a") != event_id("b")
    assert event_id("a") == event_id("a")
    assert set(event_id("a")) <= set("0123456789abcdefghijklmnopqrstuv")


async def test_an_all_day_event_uses_dates(google: FakeGoogle) -> None:
    google.respond(reply(body={"id": "x"}))
    await google.call("calendar_create", summary="Holiday", start="2026-05-01", end="2026-05-02")
    assert (google.sent[0].body["start"], google.sent[0].body["end"]) == (
        {"date": "2026-05-01"},
        {"date": "2026-05-02"},
    )


async def test_calendar_update_patches_only_the_fields_given(google: FakeGoogle) -> None:
    google.respond(reply(body={"id": "e1", "summary": "Lunch (moved)"}))
    envelope = await google.call("calendar_update", eventId="e1", summary="Lunch (moved)")
    assert envelope == OkEnvelope(data={"id": "e1", "summary": "Lunch (moved)"})
    assert google.sent == [Sent("PATCH", CAL, f"{EVENTS}/e1", {}, {"summary": "Lunch (moved)"})]
    nothing = await google.call("calendar_update", call_id="c2", eventId="e1")
    assert isinstance(nothing, ErrorEnvelope)
    assert nothing.error.code == "INVALID_ARGS"


async def test_calendar_delete_asks_first_then_deletes(google: FakeGoogle) -> None:
    assert isinstance(await google.call("calendar_delete", eventId="e1"), NeedsEnvelope)
    google.respond(({"status": "204"}, ""))
    done = await google.call("calendar_delete", call_id="c2", eventId="e1", confirmed=True)
    assert done == OkEnvelope(data={"id": "e1", "deleted": True})
    assert google.sent == [Sent("DELETE", CAL, f"{EVENTS}/e1", {}, None)]
