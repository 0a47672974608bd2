import json
from typing import Any

import pytest

from tether.dialects import (
    CallCompleted,
    CallDelta,
    CallStarted,
    PartialCall,
    get_dialect,
    parse,
    stream_parser,
)
from tether.exceptions import UserError
from tether.models import Finish, ReasoningChunk, TextChunk, ToolCallChunk, ToolCallDone, Usage
from tether.types import Provenance, ToolCall


def _chunk(**delta: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta}]}


def _tool_delta(index: int, args: str, call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": args}
    if name:
        function["name"] = name
    tc: dict[str, Any] = {"index": index, "function": function}
    if call_id:
        tc["id"] = call_id
    return _chunk(tool_calls=[tc])


CHUNKS: list[dict[str, Any]] = [
    _chunk(role="assistant", content="Let me check."),
    _tool_delta(0, "", "call_a", "get_weather"),
    _tool_delta(0, '{"city": "Pa'),
    _tool_delta(0, 'ris"}'),
    _tool_delta(1, '{"tz": "UTC"}', "call_b", "now"),
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]


def test_streamed_argument_fragments_are_assembled_into_calls() -> None:
    p = stream_parser("openai")
    events = [e for c in CHUNKS[:3] for e in p.feed_event(c)]
    assert events[1:] == [
        CallStarted(id="call_a", name="get_weather"),
        CallDelta(id="call_a", arguments_delta='{"city": "Pa'),
    ]
    assert p.partial_calls() == [PartialCall(id="call_a", name="get_weather", arguments={"city": "Pa"})]
    for c in CHUNKS[3:]:
        p.feed_event(c)
    p.close()
    assert p.result.calls == [
        ToolCall(
            id="call_a",
            name="get_weather",
            arguments={"city": "Paris"},
            provenance=Provenance(dialect="openai"),
        ),
        ToolCall(id="call_b", name="now", arguments={"tz": "UTC"}, provenance=Provenance(dialect="openai")),
    ]
    assert p.result.content == "Let me check."


def test_sse_text_of_the_stream_parses_to_the_same_result() -> None:
    p = stream_parser("openai")
    for c in CHUNKS:
        p.feed_event(c)
    p.close()
    sse = "".join(f"data: {json.dumps(c)}\n\n" for c in CHUNKS) + "data: [DONE]\n\n"
    assert parse(sse, "openai") == p.result
    q = stream_parser("openai")
    for i in range(0, len(sse), 5):
        q.feed(sse[i : i + 5])
    q.close()
    assert q.result == p.result


def test_a_whole_message_with_bad_arguments_reports_an_error_and_keeps_the_good_call() -> None:
    message = {
        "role": "assistant",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "[1, 2]"}},
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": '{"x": 1,}'}},
        ],
    }
    result = parse(json.dumps(message), "openai")
    assert [(c.id, c.arguments, [r.kind for r in c.repairs]) for c in result.calls] == [
        ("b", {"x": 1}, ["trailing_comma"])
    ]
    assert [(e.call_id, e.message) for e in result.errors] == [("a", "arguments are not a JSON object: list")]


def test_a_call_is_complete_once_the_next_one_begins_so_it_can_start_before_the_response_ends() -> None:
    p = stream_parser("openai")
    for c in CHUNKS[:4]:
        p.feed_event(c)
    events = p.feed_event(CHUNKS[4])  # call_b begins: call_a's arguments are complete JSON
    assert [e.call.id for e in events if isinstance(e, CallCompleted)] == ["call_a"]
    rest = [e for c in CHUNKS[5:] for e in p.feed_event(c)] + p.close()
    assert [e.call.id for e in rest if isinstance(e, CallCompleted)] == ["call_b"]
    whole = stream_parser("openai")
    for c in CHUNKS:
        whole.feed_event(c)
    whole.close()
    assert p.result == whole.result


def test_a_call_whose_arguments_are_not_yet_complete_waits_for_the_end() -> None:
    chunks: list[dict[str, Any]] = [
        _tool_delta(0, '{"city": "Pa', "call_a", "get_weather"),
        _tool_delta(1, '{"tz": "UTC"}', "call_b", "now"),  # interleaved: call_a is not done yet
        _tool_delta(0, 'ris"}'),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    p = stream_parser("openai")
    early = [e for c in chunks[:2] for e in p.feed_event(c) if isinstance(e, CallCompleted)]
    assert early == []
    for c in chunks[2:]:
        p.feed_event(c)
    p.close()
    assert [(c.id, c.arguments) for c in p.result.calls] == [
        ("call_a", {"city": "Paris"}),
        ("call_b", {"tz": "UTC"}),
    ]


def test_a_malformed_index_does_not_break_the_parse() -> None:
    p = stream_parser("openai")
    p.feed_event(_tool_delta(0, '{"city": "Paris"}', "call_a", "get_weather"))
    p.feed_event(
        _chunk(tool_calls=[{"index": "1", "id": "call_b", "function": {"name": "now", "arguments": "{}"}}])
    )
    p.close()
    assert [c.id for c in p.result.calls] == ["call_a", "call_b"]
    assert p.result.errors == []


def test_typed_model_events_parse_to_the_same_result_as_the_provider_json_they_come_from() -> None:
    from_json = stream_parser("openai")
    typed = stream_parser("openai")
    read = get_dialect("openai").model_events
    for c in CHUNKS:
        from_json.feed_event(c)
        for event in read(c):
            typed.feed_event(event)
    from_json.close()
    typed.close()
    assert typed.result == from_json.result
    assert [type(e) for c in CHUNKS for e in read(c)] == [
        TextChunk, ToolCallChunk, ToolCallChunk, ToolCallChunk, ToolCallChunk, Finish,
    ]  # fmt: skip


def test_a_text_dialect_reads_typed_text_and_reasoning_and_refuses_a_bare_string() -> None:
    p = stream_parser("hermes")
    p.feed_event(ReasoningChunk("Adding."))
    p.feed_event(TextChunk('<tool_call>{"name": "add", "arguments": {"a": 1}}'))
    p.feed_event(TextChunk("</tool_call>"))
    p.feed_event(Finish("stop"))
    p.close()
    assert (p.result.reasoning, [c.arguments for c in p.result.calls]) == ("Adding.", [{"a": 1}])
    with pytest.raises(UserError, match=r"TextChunk\(text\)"):
        stream_parser("hermes").feed_event("raw text")


def test_the_responses_api_reports_usage_as_chat_completions_does() -> None:
    read = get_dialect("openai").model_events
    usage: dict[str, Any] = {
        "input_tokens": 12,
        "output_tokens": 7,
        "total_tokens": 19,
        "output_tokens_details": {},
    }
    completed: dict[str, Any] = {
        "type": "response.completed",
        "response": {"id": "resp_1", "status": "completed", "usage": usage},
    }
    assert read(completed) == [Finish("completed"), Usage(12, 7)]
    assert read({"type": "response.completed", "response": {"id": "resp_1"}}) == [Finish("completed")]
    assert read({"type": "response.completed"}) == [Finish("completed")]
    whole: dict[str, Any] = {"object": "response", "output": [{"type": "message", "content": [{"type": "output_text", "text": "5"}]}],
             "usage": usage}  # fmt: skip
    assert read(whole) == [TextChunk("5"), Usage(12, 7)]
    chat: dict[str, Any] = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}}  # fmt: skip
    assert read(chat) == [Finish("stop"), Usage(12, 7)]
    # an odd usage (not an object, counts not integers) is no report rather than a failure
    assert read({"type": "response.completed", "response": {"usage": "many"}}) == [Finish("completed")]
    assert read({"type": "response.completed", "response": {"usage": {"output_tokens": "7"}}}) == [
        Finish("completed"),
        Usage(0, 0),
    ]


@pytest.mark.anyio
async def test_a_responses_api_turns_usage_counts_towards_max_tokens() -> None:
    from tether import Agent, Limits, ScriptedModel

    async def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: One.
            b: Two.
        """
        return a + b

    call = {"type": "response.output_item.done",
            "item": {"type": "function_call", "id": "fc1", "call_id": "c1", "name": "add", "arguments": '{"a": 2, "b": 3}'}}  # fmt: skip
    done = {"type": "response.completed", "response": {"usage": {"input_tokens": 5, "output_tokens": 50}}}
    model = ScriptedModel([[call, done], [{"type": "response.output_text.delta", "delta": "5"}, done]],
                          native_dialect="openai")  # fmt: skip
    result = await Agent(model, [add], dialect="openai", limits=Limits(max_tokens=40)).run("2+3?")
    assert result.reason == "max_tokens"  # 50 reported tokens, where the characters alone count ~10


def test_a_call_stated_whole_reads_as_the_same_events_as_its_pieces_streamed() -> None:
    whole, pieces = stream_parser("openai"), stream_parser("openai")
    events = whole.feed_event(ToolCallDone("item:1", "c1", "add", '{"a": 2, "b": 3}'))
    events += whole.feed_event(ToolCallDone("item:2", "c1", "add", '{"a": 2, "b": '))  # repaired
    events += whole.feed_event(ToolCallDone("item:3", None, "add", {"a": 1}))  # arguments already parsed
    events += whole.feed_event(ToolCallDone("item:4", "c4", "add", "[1]"))  # not an object
    events += whole.feed_event(ToolCallDone("item:5", "c5", "add"))
    events += whole.feed_event(ToolCallDone("item:6", "c6", "add", " "))  # blank: no arguments
    streamed: list[Any] = []
    for index, (call_id, arguments) in enumerate(
        [
            ("c1", '{"a": 2, "b": 3}'),
            ("c1", '{"a": 2, "b": '),
            (None, {"a": 1}),
            ("c4", "[1]"),
            ("c5", None),
            ("c6", " "),
        ],
        1,
    ):
        streamed += pieces.feed_event(ToolCallChunk(f"item:{index}", call_id, "add"))
        if isinstance(arguments, str):
            streamed += pieces.feed_event(ToolCallChunk(f"item:{index}", arguments=arguments))
            arguments = None
        streamed += pieces.feed_event(ToolCallDone(f"item:{index}", arguments=arguments))
    assert events == streamed
    assert [type(e).__name__ for e in events] == [
        "CallStarted", "CallDelta", "CallCompleted",
        "CallStarted", "CallDelta", "CallCompleted",
        "CallStarted", "CallCompleted",
        "CallStarted", "CallDelta", "CallFailed",
        "CallStarted", "CallCompleted",
        "CallStarted", "CallDelta", "CallCompleted",
    ]  # fmt: skip
    whole.close()
    pieces.close()
    assert whole.result == pieces.result
    assert [(c.id, c.arguments, c.repaired) for c in whole.result.calls] == [
        ("c1", {"a": 2, "b": 3}, False),
        ("c1_2", {"a": 2}, True),
        ("call_0", {"a": 1}, False),
        ("c5", {}, False),
        ("c6", {}, False),
    ]
    assert whole.first_call_at == pieces.first_call_at
