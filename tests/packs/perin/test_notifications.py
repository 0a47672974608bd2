"""notifications_list, notifications_resolve and integrations_connect act on the caller's own data only;
rate limits are per user and per tool, kept in the database every server shares."""

from typing import Any

import pytest

from tether.execution import Executor
from tether.packs.perin import perin_pack
from tether.types import ErrorEnvelope, OkEnvelope, RateLimit

from .conftest import People

pytestmark = pytest.mark.anyio

WINDOW: dict[str, Any] = {"startWindow": "2026-03-27T12:00:00", "endWindow": "2026-03-27T14:00:00"}


async def aviads_notifications(people: People) -> list[dict[str, Any]]:
    envelope = await people.call("notifications_list", user=people.aviad)
    assert isinstance(envelope, OkEnvelope)
    return envelope.data["notifications"]


async def test_the_counterpart_lists_and_resolves_the_proposal(people: People) -> None:
    await people.call("network_schedule_meeting", counterpart="Aviad", durationMins=30, **WINDOW)
    [note] = await aviads_notifications(people)
    assert (note["kind"], note["actionable"], note["resolved"]) == ("meeting_proposed", True, False)
    resolved = await people.call(
        "notifications_resolve", user=people.aviad, notificationId=note["notificationId"]
    )
    assert resolved == OkEnvelope(
        data={"notificationId": note["notificationId"], "resolved": True, "alreadyResolved": False}
    )
    assert await aviads_notifications(people) == []
    everything = await people.call("notifications_list", user=people.aviad, includeResolved=True)
    assert isinstance(everything, OkEnvelope)
    assert [n["resolved"] for n in everything.data["notifications"]] == [True]


async def test_nobody_resolves_or_sees_someone_elses_notification(people: People) -> None:
    await people.call("network_schedule_meeting", counterpart="Aviad", durationMins=30, **WINDOW)
    [note] = await aviads_notifications(people)
    for intruder in (people.dana, people.mallory):
        envelope = await people.call(
            "notifications_resolve", user=intruder, notificationId=note["notificationId"]
        )
        assert isinstance(envelope, ErrorEnvelope)
        assert envelope.error.code == "NOT_FOUND"
        listed = await people.call("notifications_list", user=intruder)
        assert isinstance(listed, OkEnvelope)
        assert listed.data["notifications"] == []
    assert len(await aviads_notifications(people)) == 1


async def test_connecting_google_calendar_asks_the_user_to_sign_in(people: People) -> None:
    envelope = await people.call("integrations_connect", type="google_calendar")
    assert isinstance(envelope, OkEnvelope)
    assert envelope.data["status"] == "action_required"
    assert "tether auth google" in envelope.data["action"]
    unknown = await people.call("integrations_connect", type="dropbox")
    assert isinstance(unknown, ErrorEnvelope)
    assert unknown.error.code == "INVALID_ARGS"


async def test_rate_limits_are_per_user_and_tool_and_shared_by_every_server(people: People) -> None:
    def server() -> Executor:
        tools = perin_pack(people.network, rate_limit=RateLimit(calls=2, per_seconds=3600))
        return Executor(tools, journal=people.network.journal)

    first, second = server(), server()
    answers = [await people.call("notifications_list", executor=e) for e in (first, second, first)]
    assert [a.ok for a in answers] == [True, True, False]
    assert isinstance(answers[2], ErrorEnvelope)
    assert answers[2].error.code == "RATE_LIMITED"
    # another user, and another tool of the same user, have their own buckets
    assert (await people.call("notifications_list", user=people.aviad, executor=second)).ok
    assert (await people.call("integrations_connect", executor=second, type="google_calendar")).ok


async def test_every_call_leaves_an_audit_line(people: People) -> None:
    await people.call("notifications_list")
    await people.call("integrations_connect", type="google_calendar")
    await people.call("notifications_resolve", notificationId="nope")
    trail = [(action, outcome) for _, action, outcome, _ in people.network.audit_trail(people.dana)]
    assert trail == [
        ("notifications_list", "ok"),
        ("integrations_connect", "started"),
        ("notifications_resolve", "not_found"),
    ]
