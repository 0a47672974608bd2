"""Every event a run emits matches the exported agent_streaming_events.v1 schema."""

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter

from tether.loop import Agent, EndTurn
from tether.models import ScriptedModel
from tether.schemas import SCHEMAS, schema_for
from tether.tools import tool
from tether.types import SpeechEvent, ToolStartEvent

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
def lookup(city: str) -> dict[str, Any]:
    """Look a city up."""
    return {"city": city}


async def test_every_emitted_event_validates_against_the_exported_schema() -> None:
    turn: dict[str, Any] = {"toolCalls": [
        {"type": "say", "id": "v1", "operation": "speak", "parameters": {"utterance": "One moment"}},
        {"type": "open_url", "id": "u1", "operation": "open", "parameters": {"url": "https://example.com"}},
        {"type": "lookup", "id": "l1", "operation": "look up", "parameters": {"city": "Oslo"}},
        {"type": "lookup", "id": "l2", "operation": "look up", "parameters": {"town": "Oslo"}},
        {"type": "send_chat", "id": "c1", "operation": "respond", "parameters": {"content": "Done."}},
        {"type": "end_turn", "id": "e1", "operation": "end_turn", "parameters": {}},
    ]}  # fmt: skip
    result = await Agent(
        ScriptedModel([json.dumps(turn)]), [lookup], dialect="json_calls", termination=EndTurn()
    ).run("go")
    validator = Draft202012Validator(schema_for("agent_streaming_events.v1"))
    adapter: TypeAdapter[Any] = TypeAdapter(SCHEMAS["agent_streaming_events.v1"])
    assert len({e.run_id for e in result.events}) == 1
    assert result.events[0].run_id is not None
    kinds: set[str] = set()
    for event in result.events:
        wire = json.loads(adapter.dump_json(event))
        errors = [e.message for e in validator.iter_errors(wire)]  # pyright: ignore[reportUnknownMemberType] - jsonschema's stub
        assert errors == [], wire
        kinds.add(wire["event"])
    assert kinds == {"on_chain_start", "on_chat_model_start", "on_tool_start", "on_tool_end", "speech", "open_url",
                     "chat", "on_chain_end"}  # fmt: skip
    for event in result.events:
        if isinstance(event, SpeechEvent) and event.audio is not None:
            Path(event.audio).unlink()  # the speech file is ours to delete


async def test_tool_start_data_is_seed_004s_line() -> None:
    turn = json.dumps({"toolCalls": [
        {"type": "lookup", "id": "l1", "operation": "look up", "parameters": {"city": "Oslo"}},
        {"type": "end_turn", "id": "e1", "operation": "end_turn", "parameters": {}},
    ]})  # fmt: skip
    result = await Agent(ScriptedModel([turn]), [lookup], dialect="json_calls", termination=EndTurn()).run(
        "go"
    )
    starts = [e.data for e in result.events if isinstance(e, ToolStartEvent)]
    assert starts == [
        "Starting tool: lookup with inputs: {'city': 'Oslo'}",
        "Starting tool: end_turn with inputs: {}",
    ]
