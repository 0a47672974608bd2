import pytest

from tether.dialects import (
    CallCompleted,
    CallDelta,
    CallFailed,
    CallStarted,
    ParseError,
    ParseResult,
    TextDelta,
    parse,
    stream_parser,
)
from tether.types import Provenance, Repair, ToolCall

from .conftest import StreamCheck


def test_a_call_with_content_and_reasoning_is_read(check_stream: StreamCheck) -> None:
    text = '<think>need weather</think>Checking. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    assert check_stream(text, "hermes") == ParseResult(
        dialect="hermes",
        calls=[
            ToolCall(
                id="call_0",
                name="get_weather",
                arguments={"city": "Paris"},
                provenance=Provenance(dialect="hermes", span=(37, len(text))),
            )
        ],
        content="Checking. ",
        reasoning="need weather",
    )


def test_a_bad_call_does_not_hide_the_good_ones(check_stream: StreamCheck) -> None:
    text = (
        '<tool_call>{"name": "a", "arguments": {}}</tool_call>'
        "<tool_call>{nonsense</tool_call>"
        '<tool_call>{"name": "b", "arguments": {"x": 1}}</tool_call>'
    )
    result = check_stream(text, "hermes")
    assert [c.name for c in result.calls] == ["a", "b"]
    assert result.errors == [
        ParseError(
            message="a call needs a name",
            dialect="hermes",
            span=(53, 85),
            raw="{nonsense",
        )
    ]


def test_repairs_are_recorded_on_the_call(check_stream: StreamCheck) -> None:
    text = "<tool_call>{'name': 'f', 'arguments': {'a': True, 'b': [1, 2,],}}"
    (call,) = check_stream(text, "hermes").calls
    assert call.arguments == {"a": True, "b": [1, 2]}
    assert {r.kind for r in call.repairs} == {
        "single_quotes",
        "python_literal",
        "trailing_comma",
        "unterminated",
    }
    assert Repair(kind="python_literal", message="read Python literal True", path="$.a") in call.repairs


def test_content_is_emitted_as_soon_as_it_cannot_be_a_tag() -> None:
    p = stream_parser("hermes")
    assert p.feed("Hello <tool_ca") == [TextDelta(text="Hello ")]
    assert p.feed("t and more") == [TextDelta(text="<tool_cat and more")]


def test_stream_events_announce_and_complete_each_call() -> None:
    p = stream_parser("hermes")
    events = p.feed('<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call><tool_call>{"x"')
    events += p.close()
    call = p.result.calls[0]
    assert events[:3] == [
        CallStarted(id="call_0", name="f"),
        CallDelta(id="call_0", arguments_delta='{"a": 1}'),
        CallCompleted(call=call),
    ]
    assert isinstance(events[3], CallFailed)


def test_text_without_calls_is_content() -> None:
    assert parse("The weather is nice today.", "hermes") == ParseResult(
        dialect="hermes", content="The weather is nice today."
    )


def test_a_call_is_announced_and_its_arguments_stream_before_it_ends() -> None:
    p = stream_parser("hermes")
    events = p.feed('<tool_call>{"name": "get_weather", "arguments": {"city": "Par')
    assert events == [
        CallStarted(id="call_0", name="get_weather"),
        CallDelta(id="call_0", arguments_delta='{"'),
    ]
    events = p.feed('is", "days": 3, "units": ["c"]')
    assert events == [CallDelta(id="call_0", arguments_delta='city": "Paris", "days": 3, "un')]
    assert [(c.name, c.arguments) for c in p.partial_calls()] == [
        ("get_weather", {"city": "Paris", "days": 3})
    ]
    events = p.feed("}}</tool_call>") + p.close()
    assert events == [
        CallDelta(id="call_0", arguments_delta='its": ["c"]}'),
        CallCompleted(call=p.result.calls[0]),
    ]


@pytest.mark.parametrize(
    "value",
    ["a < b", "x</tool_ca", "<<</tool_cal", "</tool_call", "ends with <", "<" * 30, "</tool_call\u00e9>"],
)
def test_an_end_marker_begun_in_a_value_does_not_end_the_call(check_stream: StreamCheck, value: str) -> None:
    # the in-region fast path skips deltas without `<`: a `<` in one delta and the rest in the next must still
    # be seen, and text that only begins the end marker must stay in the body
    text = f'<tool_call>{{"name": "f", "arguments": {{"v": "{value}"}}}}</tool_call> after'
    result = check_stream(text, "hermes")
    assert [c.arguments for c in result.calls] == [{"v": value}]
    assert result.content == " after"
    assert not result.errors
