"""Modes (seed 002): talk first, act first, and planner -> executor -> responder."""

from typing import Any

import anyio
import pytest

from tether.loop import Agent, actionable_intent
from tether.models import ScriptedModel
from tether.tools import tool

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
async def slow_lookup(city: str) -> dict[str, Any]:
    """Look a city up, slowly."""
    await anyio.sleep(0.02)
    return {"city": city}


TURN = (
    'Checking the weather.\n<tool_call>\n{"name": "slow_lookup", "arguments": {"city": "Oslo"}}\n</tool_call>'
)


def order(events: list[Any]) -> list[str]:
    return [e.event for e in events if e.event in ("on_chat_model_stream", "on_tool_end")]


async def test_talk_first_streams_text_before_the_tools_finish() -> None:
    result = await Agent(ScriptedModel([TURN, "Cold."]), [slow_lookup], dialect="hermes").run("hi")
    seen = order(result.events)
    assert seen.index("on_chat_model_stream") < seen.index("on_tool_end")


async def test_act_first_holds_the_text_until_the_tools_are_done() -> None:
    agent = Agent(ScriptedModel([TURN, "Cold."]), [slow_lookup], dialect="hermes", mode="act_first")
    result = await agent.run("hi")
    seen = order(result.events)
    first_tool_end = seen.index("on_tool_end")
    assert all(e == "on_chat_model_stream" for e in seen[first_tool_end + 1 :])
    assert "on_chat_model_stream" not in seen[:first_tool_end]
    text = "".join(e.data for e in result.events if e.event == "on_chat_model_stream")
    assert text == "Checking the weather.\nCold."


def test_the_intent_heuristic_acts_first_on_requests_to_do_something() -> None:
    assert actionable_intent("Schedule a 30-minute meeting with Aviad tomorrow") == "act_first"
    assert actionable_intent("How are you today?") == "talk_first"


@pytest.mark.parametrize(
    "prompt",
    [
        # seed 002's own acceptance sentences, as written there (non-breaking hyphens, an en dash)
        "Set a 30\u2011minute meeting with Aviad tomorrow between 12:00\u201314:00 Israel time",
        "Can you set a half\u2011hour meeting with Aviad tomorrow between 12:00 and 14:00 Israel time?",
        # its coordination and notification flows
        "Confirm the meeting with Aviad for the second slot",
        "Resolve my open notifications",
        "Propose three times to Dana next week",
    ],
)
def test_the_intent_heuristic_acts_first_on_seed_002s_scheduling_and_coordination(prompt: str) -> None:
    assert actionable_intent(prompt) == "act_first"


@pytest.mark.parametrize(
    "prompt", ["Hi! How was your weekend?", "Tell me a joke", "What do you think of Python?"]
)
def test_the_intent_heuristic_talks_first_in_conversation(prompt: str) -> None:
    assert actionable_intent(prompt) == "talk_first"


async def test_a_mode_chooser_is_asked_per_prompt() -> None:
    agent = Agent(ScriptedModel([TURN, "Cold."]), [slow_lookup], dialect="hermes", mode=actionable_intent)
    result = await agent.run("Find the weather in Oslo")
    seen = order(result.events)
    assert "on_chat_model_stream" not in seen[: seen.index("on_tool_end")]


async def test_planner_executor_responder_uses_a_second_model_for_the_reply() -> None:
    planner = ScriptedModel([TURN, "done planning"])
    responder = ScriptedModel(["It is cold in Oslo."])
    agent = Agent(planner, [slow_lookup], dialect="hermes", responder=responder)
    result = await agent.run("Weather in Oslo?")
    assert (result.output, result.reason) == ("It is cold in Oslo.", "no_calls")
    request = responder.requests[0]
    assert request.tools == ()
    feedback = [m for m in request.messages if m.kind == "user"]
    assert any('"data":{"city":"Oslo"}' in m.content for m in feedback)  # the tool results, in hermes' format
