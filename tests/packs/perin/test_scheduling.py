"""network_schedule_meeting and network_confirm_meeting through the executor, on SQLite and PostgreSQL:
what they do for the user, and every guardrail of seed 002 attacked."""

from typing import Any

import pytest

from tether.types import ErrorEnvelope, NeedsEnvelope, OkEnvelope, ToolCall

from .conftest import People, tomorrow

pytestmark = pytest.mark.anyio

NOON_TO_TWO: dict[str, Any] = {
    "startWindow": "2026-03-27T12:00:00",
    "endWindow": "2026-03-27T14:00:00",
    "tzHint": "Asia/Jerusalem",
}


async def schedule(people: People, **arguments: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {"counterpart": "Aviad", "durationMins": 30, **NOON_TO_TWO}
    envelope = await people.call("network_schedule_meeting", **defaults | arguments)
    assert isinstance(envelope, OkEnvelope), envelope
    return envelope.data


def error_code(envelope: object) -> str:
    assert isinstance(envelope, ErrorEnvelope), envelope
    return envelope.error.code


async def test_a_meeting_is_proposed_only_in_free_slots_inside_the_window_in_israel_time(
    people: People,
) -> None:
    data = await schedule(people)
    starts = [p["start"] for p in data["proposals"]]
    # Aviad's dentist 12:30-13:00 is skipped; tomorrow is the first day of summer time (+03:00)
    assert starts == [
        "2026-03-27T12:00:00+03:00",
        "2026-03-27T13:00:00+03:00",
        "2026-03-27T13:15:00+03:00",
        "2026-03-27T13:30:00+03:00",
    ]
    assert data["proposals"][-1]["end"] == "2026-03-27T14:00:00+03:00"
    assert (data["counterpartUserId"], data["durationMins"]) == (people.aviad, 30)
    [connection] = [c for c in people.network.connections_of(people.dana) if c.counterpart.id == people.aviad]
    assert data["connectionId"] == connection.id


async def test_aviad_is_notified_and_the_session_keeps_a_transcript(people: People) -> None:
    data = await schedule(people)
    [note] = people.network.notifications(people.aviad)
    assert (note.kind, note.session_id, note.actionable) == ("meeting_proposed", data["sessionId"], True)
    assert (
        note.message == "Dana Levi proposes a 30-minute meeting: 12:00, 13:00, 13:15, 13:30 (Asia/Jerusalem)."
    )
    assert people.network.transcript(data["sessionId"]) == [
        (people.dana, "Proposed 30 minutes at 12:00, 13:00, 13:15, 13:30 (Asia/Jerusalem).")
    ]
    assert people.network.notifications(people.dana) == []


async def test_a_window_without_an_offset_is_read_in_the_users_zone_and_with_an_offset_as_given(
    people: People,
) -> None:
    local = await schedule(people, tzHint=None)
    utc = await schedule(
        people, startWindow="2026-03-27T09:00:00Z", endWindow="2026-03-27T11:00:00Z", tzHint=None
    )
    assert [p["start"] for p in utc["proposals"]] == [p["start"] for p in local["proposals"]]


async def test_slots_stay_inside_both_working_days(people: People) -> None:
    late = people.network.add_user("Lee", "lee@example.com", "America/New_York")
    people.network.connect(people.dana, late)
    # 15:00-19:00 in Israel is 09:00-13:00 in New York; Dana stops at 18:00 Israel, Lee starts at 09:00 New York
    data = await schedule(
        people,
        counterpart="Lee",
        durationMins=60,
        startWindow="2026-03-27T14:00:00",
        endWindow="2026-03-27T19:00:00",
    )
    assert [p["start"][11:16] for p in data["proposals"]] == ["16:00", "16:15", "16:30", "16:45", "17:00"]


async def test_without_a_duration_it_needs_one_and_the_answer_completes_the_request(people: People) -> None:
    asked = await people.call("network_schedule_meeting", counterpart="Aviad", **NOON_TO_TWO)
    assert asked == NeedsEnvelope(needs={"durationMins": True})
    assert people.network.notifications(people.aviad) == []  # nothing happened yet
    answered = await people.call(
        "network_schedule_meeting", counterpart="Aviad", durationMins=30, **NOON_TO_TWO
    )
    assert isinstance(answered, OkEnvelope)
    assert len(answered.data["proposals"]) == 4


async def test_aviad_busy_the_whole_window_gets_no_common_slots(people: People) -> None:
    people.network.add_busy(people.aviad, tomorrow(11), tomorrow(15), "Offsite")
    envelope = await people.call(
        "network_schedule_meeting", counterpart="Aviad", durationMins=30, **NOON_TO_TWO
    )
    assert error_code(envelope) == "NO_COMMON_SLOTS"
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.message == (
        "Aviad Cohen and the user have no 30-minute slot free inside 2026-03-27 12:00 - 14:00 (Asia/Jerusalem) "
        "within both working days."
    )
    assert people.network.notifications(people.aviad) == []


async def test_an_inactive_connection_is_refused(people: People) -> None:
    people.network.update_connection(people.dana, people.aviad, status="paused")
    envelope = await people.call(
        "network_schedule_meeting", counterpart="Aviad", durationMins=30, **NOON_TO_TWO
    )
    assert error_code(envelope) == "CONNECTION_INACTIVE"
    assert isinstance(envelope, ErrorEnvelope)
    assert (
        envelope.error.message
        == "Your connection with Aviad Cohen is paused, so Perin cannot schedule with them."
    )


async def test_a_missing_scope_is_refused(people: People) -> None:
    people.network.update_connection(people.dana, people.aviad, scopes=["calendar.availability.read"])
    envelope = await people.call(
        "network_schedule_meeting", counterpart="Aviad", durationMins=30, **NOON_TO_TWO
    )
    assert error_code(envelope) == "SCOPES_MISSING"
    assert isinstance(envelope, ErrorEnvelope)
    assert "calendar.events.propose" in envelope.error.message


async def test_two_people_named_aviad_need_the_user_to_say_which(people: People) -> None:
    other = people.network.add_user("Aviad Peretz", "aviad.p@example.com", "Asia/Jerusalem")
    people.network.connect(people.dana, other)
    envelope = await people.call(
        "network_schedule_meeting", counterpart="aviad", durationMins=30, **NOON_TO_TWO
    )
    assert envelope == NeedsEnvelope(
        needs={
            "counterpart": "Which aviad do you mean: Aviad Cohen (aviad@example.com) or "
            "Aviad Peretz (aviad.p@example.com)?"
        }
    )
    chosen = await schedule(people, counterpart="aviad.p@example.com")
    assert chosen["counterpartUserId"] == other


async def test_a_misspelt_name_still_finds_the_connection(people: People) -> None:
    assert (await schedule(people, counterpart="Aviad Kohen"))["counterpartUserId"] == people.aviad


async def test_someone_in_the_network_but_not_connected_is_not_found(people: People) -> None:
    envelope = await people.call(
        "network_schedule_meeting", counterpart="Mallory", durationMins=30, **NOON_TO_TWO
    )
    assert error_code(envelope) == "NOT_FOUND"
    assert people.network.notifications(people.mallory) == []


async def test_an_unknown_name_is_not_found_with_a_suggestion(people: People) -> None:
    envelope = await people.call(
        "network_schedule_meeting", counterpart="Aviv", durationMins=30, **NOON_TO_TWO
    )
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "NOT_FOUND"
    assert envelope.error.suggestion == (
        "Did they mean Aviad Cohen? Ask the user for the person's full name or email; do not guess an id."
    )


async def test_ids_from_the_model_are_refused_not_used(people: People) -> None:
    # the model tries to name the counterpart (Mallory, not connected) and the acting user by id
    envelope = await people.call(
        "network_schedule_meeting",
        counterpart="Aviad",
        durationMins=30,
        counterpartUserId=people.mallory,
        **NOON_TO_TWO,
    )
    assert error_code(envelope) == "INVALID_ARGS"
    envelope = await people.call(
        "network_schedule_meeting", counterpart=people.mallory, durationMins=30, **NOON_TO_TWO
    )
    assert error_code(envelope) == "NOT_FOUND"  # an id is no name: ids resolve to no one


async def test_a_caller_who_is_not_a_member_is_unauthorized(people: People) -> None:
    envelope = await people.call(
        "network_schedule_meeting", user="intruder", counterpart="Aviad", durationMins=30
    )
    assert error_code(envelope) == "UNAUTHORIZED"
    anonymous = await people.executor(require_principal=True).execute(
        ToolCall(id="c", name="notifications_list", arguments={})
    )
    assert error_code(anonymous) == "UNAUTHORIZED"


async def test_the_duration_must_be_between_5_and_240_minutes(people: People) -> None:
    for minutes in (4, 241):
        envelope = await people.call("network_schedule_meeting", counterpart="Aviad", durationMins=minutes)
        assert error_code(envelope) == "INVALID_ARGS"


async def test_a_bad_time_zone_or_window_is_explained(people: People) -> None:
    zone = await people.call(
        "network_schedule_meeting", counterpart="Aviad", durationMins=30, tzHint="Israel time"
    )
    assert isinstance(zone, ErrorEnvelope)
    assert (
        zone.error.suggestion
        == "Pass an IANA name such as 'Asia/Jerusalem' for Israel time, or leave tzHint out."
    )
    backwards = await schedule_error(
        people, startWindow="2026-03-27T14:00:00", endWindow="2026-03-27T12:00:00"
    )
    past = await schedule_error(people, startWindow="2026-03-20T12:00:00", endWindow="2026-03-20T14:00:00")
    garbage = await schedule_error(people, startWindow="tomorrow noon")
    assert [backwards, past, garbage] == ["INVALID_ARGS"] * 3


async def schedule_error(people: People, **window: str) -> str:
    arguments: dict[str, Any] = {
        "counterpart": "Aviad",
        "durationMins": 30,
        "tzHint": "Asia/Jerusalem",
        **window,
    }
    return error_code(await people.call("network_schedule_meeting", **arguments))


async def test_every_action_is_audited(people: People) -> None:
    data = await schedule(people)
    people.network.update_connection(people.dana, people.aviad, scopes=[])
    await people.call("network_confirm_meeting", sessionId=data["sessionId"], selectionIndex=0)
    trail = [(user, action, outcome) for user, action, outcome, _ in people.network.audit_trail()]
    assert trail == [
        (people.dana, "schedule_meeting", "proposed"),
        (people.dana, "confirm_meeting", "refused"),
    ]


async def test_a_replayed_call_answers_from_the_journal_without_a_second_session(people: People) -> None:
    executor = people.executor()
    arguments: dict[str, Any] = {"counterpart": "Aviad", "durationMins": 30, **NOON_TO_TWO}
    first = await people.call("network_schedule_meeting", executor=executor, call_id="call_same", **arguments)
    again = await people.call("network_schedule_meeting", executor=executor, call_id="call_same", **arguments)
    assert isinstance(first, OkEnvelope)
    assert again == first
    assert len(people.network.notifications(people.aviad)) == 1
