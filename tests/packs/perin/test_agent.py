"""Seed 002's acceptance scenario from chat: Perin's planner (native OpenAI tool calls) -> executor ->
responder (streamed), scripted with exactly what the models stream, on SQLite and PostgreSQL."""

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tether.exceptions import ModelError
from tether.loop import RunResult
from tether.models import ModelChunk, ModelRequest, ScriptedModel
from tether.packs.perin import SYSTEM_PROMPT, perin_agent
from tether.types import (
    ChatModelStreamEvent,
    ErrorEnvelope,
    Event,
    NeedsEnvelope,
    OkEnvelope,
    ToolEndEvent,
    ToolResultMessage,
)

from . import openai_stream
from .conftest import People, tomorrow

pytestmark = pytest.mark.anyio

ASK = "Set a 30-minute meeting with Aviad tomorrow between 12:00-14:00 Israel time"
CALL = {
    "counterpart": "Aviad",
    "durationMins": 30,
    "startWindow": "2026-03-27T12:00:00",
    "endWindow": "2026-03-27T14:00:00",
    "tzHint": "Asia/Jerusalem",
}
SUMMARY = (
    "I proposed four 30-minute times to Aviad tomorrow (Israel time): 12:00, 13:00, 13:15 and 13:30. "
    "He has been notified; tell me which one to book."
)


def planner(*turns: list[dict[str, Any]]) -> ScriptedModel:
    return ScriptedModel(list(turns), native_dialect="openai", name="gpt-4o-mini")


def responder(*replies: str) -> ScriptedModel:
    return ScriptedModel([openai_stream.text(r) for r in replies], native_dialect="openai", name="gpt-4o")


def envelopes(result: RunResult) -> list[Any]:
    return [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)]


async def test_the_meeting_is_proposed_from_chat_and_the_reply_streams_a_summary(people: People) -> None:
    plan = planner(openai_stream.tool_call("network_schedule_meeting", CALL), openai_stream.text("Done."))
    reply = responder(SUMMARY)
    agent = perin_agent(people.network, people.dana, planner=plan, responder=reply)
    events: list[Event] = []
    result = await agent.run(ASK, on_event=events.append)
    assert result.output == SUMMARY
    [envelope] = envelopes(result)
    assert isinstance(envelope, OkEnvelope)
    assert [p["start"][11:16] for p in envelope.data["proposals"]] == ["12:00", "13:00", "13:15", "13:30"]
    assert [n.kind for n in people.network.notifications(people.aviad)] == ["meeting_proposed"]
    # act first: the user sees nothing until the tool is done, then only the responder's words, streamed
    shown = [(i, e.data) for i, e in enumerate(events) if isinstance(e, ChatModelStreamEvent)]
    tool_done = next(i for i, e in enumerate(events) if isinstance(e, ToolEndEvent))
    assert len(shown) > 1
    assert shown[0][0] > tool_done
    assert "".join(str(data) for _, data in shown) == SUMMARY
    # the planner is offered the tools natively and told the seed's rules and what "tomorrow" is
    request = plan.requests[0]
    assert {t.name for t in request.tools} >= {"network_schedule_meeting", "network_confirm_meeting"}
    assert request.system == SYSTEM_PROMPT.format(
        name="Dana Levi", today="Thursday 2026-03-26", timezone="Asia/Jerusalem"
    )
    assert "Never fabricate IDs" in request.system


async def test_without_a_duration_perin_asks_and_the_answer_completes_it(people: People) -> None:
    question = "How long should the meeting with Aviad be?"
    without = {k: v for k, v in CALL.items() if k != "durationMins"}
    plan = planner(
        openai_stream.tool_call("network_schedule_meeting", without),
        openai_stream.text("Asking for the duration."),
        openai_stream.tool_call("network_schedule_meeting", CALL, call_id="call_Yr4qA2"),
        openai_stream.text("Done."),
    )
    agent = perin_agent(people.network, people.dana, planner=plan, responder=responder(question, SUMMARY))
    first = await agent.run(ASK.replace("30-minute ", ""))
    assert first.output == question
    assert envelopes(first) == [NeedsEnvelope(needs={"durationMins": True})]
    assert people.network.notifications(people.aviad) == []
    second = await agent.run("30 minutes", history=first.messages)
    assert second.output == SUMMARY
    [answer] = envelopes(second)[len(envelopes(first)) :]
    assert isinstance(answer, OkEnvelope)  # run again, not the recorded `needs` replayed
    assert answer.data["durationMins"] == 30
    assert len(people.network.notifications(people.aviad)) == 1


async def test_confirming_from_chat_books_both_calendars_and_a_second_confirm_does_not(
    people: People,
) -> None:
    plan = planner(
        openai_stream.tool_call("network_schedule_meeting", CALL),
        openai_stream.text("Proposed."),
    )
    agent = perin_agent(people.network, people.dana, planner=plan, responder=responder(SUMMARY))
    proposed = await agent.run(ASK)
    [envelope] = envelopes(proposed)
    assert isinstance(envelope, OkEnvelope)
    confirm = {"sessionId": envelope.data["sessionId"], "selectionIndex": 0}
    booked = "Booked: tomorrow 12:00-12:30 Israel time with Aviad, on both calendars."
    again = "That meeting is already booked for 12:00; I did not book it twice."
    plan.turns += [
        openai_stream.tool_call("network_confirm_meeting", confirm, call_id="call_c1"),
        openai_stream.text("Booked."),
        openai_stream.tool_call(
            "network_confirm_meeting", confirm | {"selectionIndex": 1}, call_id="call_c2"
        ),
        openai_stream.text("Already booked."),
    ]
    agent = perin_agent(people.network, people.dana, planner=plan, responder=responder(booked, again))
    first = await agent.run("Book the first one", history=proposed.messages)
    second = await agent.run("Actually book 13:00 too", history=first.messages)
    assert (first.output, second.output) == (booked, again)
    [refused] = envelopes(second)[-1:]
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.code == "CONFLICT"
    assert people.network.bookings(people.aviad) == [((1774602000, 1774603800), "confirmed")]


@pytest.mark.parametrize(
    ("arrange", "code", "reply"),
    [
        (
            "busy",
            "NO_COMMON_SLOTS",
            "Aviad has no free 30 minutes between 12:00 and 14:00 tomorrow. Try another time?",
        ),
        (
            "inactive",
            "CONNECTION_INACTIVE",
            "Your connection with Aviad is paused, so I can't schedule with him.",
        ),
        ("scope", "SCOPES_MISSING", "Aviad hasn't allowed me to propose meetings to him yet; ask him to."),
    ],
)
async def test_refusals_reach_the_responder_as_envelopes_and_the_user_as_plain_words(
    people: People, arrange: str, code: str, reply: str
) -> None:
    if arrange == "busy":
        people.network.add_busy(people.aviad, tomorrow(11), tomorrow(15))
    elif arrange == "inactive":
        people.network.update_connection(people.dana, people.aviad, status="paused")
    else:
        people.network.update_connection(people.dana, people.aviad, scopes=["calendar.availability.read"])
    plan = planner(openai_stream.tool_call("network_schedule_meeting", CALL), openai_stream.text("Refused."))
    answer = responder(reply)
    result = await perin_agent(people.network, people.dana, planner=plan, responder=answer).run(ASK)
    [envelope] = envelopes(result)
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == code
    assert result.output == reply
    # the responder saw the refusal, suggestion included, to explain it
    seen = "\n".join(str(getattr(m, "content", "")) for m in answer.requests[0].messages)
    assert code in seen
    assert envelope.error.suggestion is not None
    assert envelope.error.suggestion in seen
    assert people.network.bookings(people.aviad) == []


async def test_two_aviads_make_perin_ask_which_one(people: People) -> None:
    people.network.connect(
        people.dana, people.network.add_user("Aviad Peretz", "ap@example.com", "Asia/Jerusalem")
    )
    plan = planner(
        openai_stream.tool_call("network_schedule_meeting", CALL), openai_stream.text("Ambiguous.")
    )
    question = "Which Aviad: Aviad Cohen or Aviad Peretz?"
    result = await perin_agent(people.network, people.dana, planner=plan, responder=responder(question)).run(
        ASK
    )
    [envelope] = envelopes(result)
    assert isinstance(envelope, NeedsEnvelope)
    assert "Aviad Cohen (aviad@example.com) or Aviad Peretz (ap@example.com)" in str(
        envelope.needs["counterpart"]
    )
    assert result.output == question


class Down(ScriptedModel):
    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        raise ModelError("503 Service Unavailable")
        yield ""  # pragma: no cover - makes this an async generator


async def test_when_the_planner_is_down_the_responder_plans_too(people: People) -> None:
    stand_in = ScriptedModel(
        [
            openai_stream.tool_call("network_schedule_meeting", CALL),
            openai_stream.text("Done."),
            openai_stream.text(SUMMARY),
        ],
        native_dialect="openai",
    )
    agent = perin_agent(
        people.network, people.dana, planner=Down([], native_dialect="openai"), responder=stand_in
    )
    result = await agent.run(ASK)
    assert result.output == SUMMARY
    assert isinstance(envelopes(result)[0], OkEnvelope)


async def test_the_agent_acts_only_for_its_own_user(people: People) -> None:
    # the model is told to act for Aviad by id: tools take no user id, so it cannot
    attack = dict(CALL, counterpart="Dana", userId=people.aviad)
    plan = planner(openai_stream.tool_call("network_schedule_meeting", attack), openai_stream.text("x"))
    result = await perin_agent(people.network, people.dana, planner=plan, responder=responder("Sorry.")).run(
        ASK
    )
    [envelope] = envelopes(result)
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "INVALID_ARGS"
    assert people.network.notifications(people.dana) == []
    assert people.network.notifications(people.aviad) == []
