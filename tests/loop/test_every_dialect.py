"""The loop runs a scripted call in every text dialect: ScriptedModel writes the call as the dialect does."""

import pytest

from tether.dialects import dialect_names
from tether.exceptions import UserError
from tether.loop import Agent, NoCalls
from tether.models import ModelRequest, ScriptedModel
from tether.tools import tool
from tether.types import ToolCall

pytestmark = pytest.mark.anyio

NATIVE = {"openai", "anthropic", "gemini"}
TEXT_DIALECTS = [d for d in dialect_names() if d not in NATIVE and not d.startswith("test_")]
ASKED: list[str] = []


@tool(side_effects="none")
def weather(city: str, days: int) -> str:
    """The forecast."""
    ASKED.append(f"{city}:{days}")
    return f"sunny in {city} for {days} days"


@pytest.mark.parametrize("dialect", TEXT_DIALECTS)
async def test_a_scripted_call_runs_and_the_answer_comes_back(dialect: str) -> None:
    ASKED.clear()
    call = ToolCall(id="c1", name="weather", arguments={"city": 'Zürich "centre"', "days": 2})
    model = ScriptedModel([["Let me check.\n", call], "Sunny, two days."], chunk_size=7)
    result = await Agent(model, [weather], dialect=dialect, termination=NoCalls()).run("Weather?")
    assert ASKED == ['Zürich "centre":2']
    assert (result.output, result.reason) == ("Sunny, two days.", "no_calls")
    assert "sunny in Zürich" in str(model.requests[1].messages[-1])  # the result went back to the model


async def test_scripted_calls_need_a_dialect_to_be_written_in() -> None:
    model = ScriptedModel([[ToolCall(id="c1", name="weather", arguments={})]])
    with pytest.raises(UserError, match="names no dialect"):
        async for _ in model.stream(ModelRequest(messages=[])):
            pass
