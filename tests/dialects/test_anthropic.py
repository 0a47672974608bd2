import json
from typing import Any

from tether.dialects import CallDelta, PartialCall, parse, stream_parser
from tether.types import Provenance, ToolCall

EVENTS: list[dict[str, Any]] = [
    {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": []}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hmm"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Checking."}},
    {"type": "content_block_stop", "index": 1},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": '{"city": "Pa'},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": 'ris"}'},
    },
    {"type": "content_block_stop", "index": 2},
    {"type": "message_stop"},
]


def test_input_json_deltas_are_assembled_and_partially_parsed() -> None:
    p = stream_parser("anthropic")
    for e in EVENTS[:9]:
        p.feed_event(e)
    assert p.partial_calls() == [PartialCall(id="toolu_1", name="get_weather", arguments={"city": "Pa"})]
    assert p.feed_event(EVENTS[9]) == [CallDelta(id="toolu_1", arguments_delta='ris"}')]
    for e in EVENTS[10:]:
        p.feed_event(e)
    p.close()
    assert p.result.calls == [
        ToolCall(
            id="toolu_1",
            name="get_weather",
            arguments={"city": "Paris"},
            provenance=Provenance(dialect="anthropic"),
        )
    ]
    assert (p.result.content, p.result.reasoning) == ("Checking.", "hmm")
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in EVENTS)
    assert parse(sse, "anthropic") == p.result


def test_a_whole_message_is_read() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "On it."},
            {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {"tz": "UTC"}},
        ],
    }
    result = parse(json.dumps(message), "anthropic")
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [("toolu_2", "now", {"tz": "UTC"})]
    assert result.content == "On it."
