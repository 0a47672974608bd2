import json

from tether.dialects import ParseError, parse
from tether.types import Provenance, Repair, ToolCall

from .conftest import StreamCheck

SEED_000 = """```json
{
  "toolCalls": [
    {"type": "say", "id": "v1", "operation": "speak", "parameters": {"utterance": "Let me check..."}},
    {"type": "gmail_list", "id": "g1", "operation": "list", "parameters": {"maxResults": 10}, "priority": 2},
    {"type": "end_turn", "id": "e1", "operation": "end_turn", "parameters": {}}
  ]
}
```"""


def test_seed_000_output_is_read_with_ids_priorities_and_operations(check_stream: StreamCheck) -> None:
    result = check_stream(SEED_000, "json_calls")
    span = (0, len(SEED_000))
    assert result.calls[1] == ToolCall(
        id="g1",
        name="gmail_list",
        arguments={"maxResults": 10},
        priority=2,
        annotations=("operation: list",),
        provenance=Provenance(dialect="json_calls", span=span),
    )
    assert [c.id for c in result.calls] == ["v1", "g1", "e1"]
    assert result.content == ""


def test_raw_json_without_a_fence_is_read(check_stream: StreamCheck) -> None:
    text = '{"toolCalls": [{"type": "end_turn", "id": "e1", "operation": "end_turn", "parameters": {}}]}'
    assert [c.name for c in check_stream(text, "json_calls").calls] == ["end_turn"]


def test_invalid_calls_become_errors_while_valid_ones_come_through(check_stream: StreamCheck) -> None:
    text = '{"toolCalls": [{"type": 5, "id": "x"}, {"type": "say", "id": "v1", "parameters": {"utterance": "hi"},},]}'
    result = check_stream(text, "json_calls")
    assert result.calls == [
        ToolCall(
            id="v1",
            name="say",
            arguments={"utterance": "hi"},
            provenance=Provenance(
                dialect="json_calls",
                span=(0, len(text)),
                repairs=(
                    Repair(kind="trailing_comma", message="removed a trailing comma", path="$.toolCalls"),
                    Repair(kind="trailing_comma", message="removed a trailing comma", path="$.toolCalls[1]"),
                ),
            ),
        )
    ]
    assert result.errors == [
        ParseError(
            message="toolCalls[0] needs a string 'type' (the tool's name)",
            dialect="json_calls",
            span=(0, len(text)),
            raw='{"type": 5, "id": "x"}',
        )
    ]


def test_prose_with_braces_is_content() -> None:
    assert parse("use {braces} freely", "json_calls").content == "use {braces} freely"


def test_call_ids_are_unique_within_an_output(check_stream: StreamCheck) -> None:
    text = json.dumps({"toolCalls": [
        {"type": "f", "id": "x", "parameters": {}},
        {"type": "f", "id": "x", "parameters": {}},
        {"type": "f", "parameters": {}},
        {"type": "f", "id": "call_0", "parameters": {}},
    ]})  # fmt: skip
    assert [c.id for c in check_stream(text, "json_calls").calls] == ["x", "x_2", "call_0", "call_0_2"]
