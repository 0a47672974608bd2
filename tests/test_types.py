"""The wire model: JSON round trips, seed wire forms, and schemas that match the committed files."""

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from tether.schemas import SCHEMAS, schema_for
from tether.types import (
    AssistantMessage,
    ChainEndEvent,
    ChatModelStartEvent,
    ChatModelStreamEvent,
    ErrorEnvelope,
    ErrorInfo,
    Event,
    MeowstikToolCalls,
    Message,
    NeedsEnvelope,
    OkEnvelope,
    Provenance,
    Repair,
    SystemMessage,
    ToolCall,
    ToolCallRecord,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)

ROOT = Path(__file__).resolve().parents[1]
ENVELOPES: TypeAdapter[Any] = TypeAdapter(SCHEMAS["envelope.v1"])
MESSAGES: TypeAdapter[Any] = TypeAdapter(list[Message])
EVENTS: TypeAdapter[Any] = TypeAdapter(list[Event])


@pytest.mark.parametrize(
    ("wire", "model"),
    [
        ({"ok": True, "data": {"sessionId": "s1"}}, OkEnvelope(data={"sessionId": "s1"})),
        ({"ok": False, "needs": {"duration": True}}, NeedsEnvelope(needs={"duration": True})),
        (
            {"ok": False, "error": {"code": "NOT_FOUND", "message": "no such file", "recoverable": True,
                                    "suggestion": "Check the path"}},
            ErrorEnvelope(error=ErrorInfo(code="NOT_FOUND", message="no such file", recoverable=True,
                                          suggestion="Check the path")),
        ),
    ],
)  # fmt: skip
def test_envelopes_read_and_write_the_seed_wire_form(wire: dict[str, Any], model: Any) -> None:
    assert ENVELOPES.validate_python(wire) == model
    assert ENVELOPES.validate_json(json.dumps(wire)) == model
    assert model.model_dump(exclude_none=True) == wire


def test_an_envelope_is_exactly_one_of_the_three_forms() -> None:
    bad_envelopes: list[dict[str, Any]] = [{"ok": False}, {"ok": True, "error": {}}, {"data": 1}]
    for bad in bad_envelopes:
        with pytest.raises(ValidationError):
            ENVELOPES.validate_python(bad)


def test_a_conversation_round_trips_through_json() -> None:
    call = ToolCall(
        id="call_1", name="fs.read", arguments={"path": "a.md"}, why="Learn the layout", priority=2,
        annotations=("# previous read showed parseAtom",),
        provenance=Provenance(dialect="yaml", span=(10, 80), repairs=(Repair(kind="trailing_comma", message="x"),)),
    )  # fmt: skip
    conversation = [
        SystemMessage(content="You are helpful."),
        UserMessage(content="Read a.md"),
        AssistantMessage(content="Reading.", tool_calls=(call,), raw="```yaml ...```"),
        ToolResultMessage(call_id="call_1", name="fs.read", envelope=OkEnvelope(data={"content": "# A"})),
    ]
    assert MESSAGES.validate_json(MESSAGES.dump_json(conversation)) == conversation
    assert call.repaired


def test_events_use_seed_004_names_and_wire_fields() -> None:
    events = [
        ChatModelStartEvent(toolCalls=[]),
        ChatModelStreamEvent(data="Let "),
        ChainEndEvent(data="done", toolCalls=[ToolCallRecord(toolType="vectorSearch", toolName="search_docs",
                                                              input={"query": "ollama"}, output={"results": []})]),
    ]  # fmt: skip
    wire = json.loads(EVENTS.dump_json(events, exclude_none=True))
    assert wire == [
        {"event": "on_chat_model_start", "toolCalls": []},
        {"event": "on_chat_model_stream", "data": "Let "},
        {"event": "on_chain_end", "data": "done", "toolCalls": [
            {"toolType": "vectorSearch", "toolName": "search_docs", "input": {"query": "ollama"},
             "output": {"results": []}}]},
    ]  # fmt: skip
    assert EVENTS.validate_python(wire) == events


def test_meowstik_output_parses_with_default_priority() -> None:
    output = MeowstikToolCalls.model_validate_json(
        '{"toolCalls": [{"type": "send_chat", "id": "c1", "operation": "respond", "parameters": {"content": "hi"}}]}'
    )
    assert output.toolCalls[0].priority == 0


def test_tool_specs_round_trip_and_refuse_bad_names() -> None:
    spec = ToolSpec(
        name="fs.read", input_schema={"type": "object", "properties": {"path": {"type": "string"}}}
    )
    assert ToolSpec.model_validate_json(spec.model_dump_json()) == spec
    for bad in ["", "1abc", "has space", "x" * 200]:
        with pytest.raises(ValidationError):
            ToolSpec(name=bad)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schemas_match_the_models(name: str) -> None:
    committed = json.loads((ROOT / "schemas" / f"{name}.json").read_text(encoding="utf-8"))
    assert committed == schema_for(name), f"run `tether schema export schemas` and commit the result ({name})"
