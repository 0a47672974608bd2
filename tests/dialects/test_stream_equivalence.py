"""Every text dialect, every cut: the events a stream emits say what the one-shot parse reads.

For each text dialect, an output in its own format (prose, its calls written by its own `render_calls`, more
prose) is cut in two at every place, and in 4-character deltas at every offset. The streamed events alone must
rebuild the one-shot `parse` result: the text deltas join to its content, the reasoning deltas to its reasoning,
each call is announced once (`CallStarted`, with its name) before its argument fragments, which join to JSON
text of its arguments, then completed with the call `parse` reads; and the stream's own result equals it.
"""

import json
from typing import Any

import pytest

from tether.dialects import (
    CallCompleted,
    CallDelta,
    CallStarted,
    ParseEvent,
    ParseResult,
    ReasoningDelta,
    TextDelta,
    dialect_names,
    get_dialect,
    parse,
    stream_parser,
)
from tether.types import ToolCall

NATIVE = {"openai", "anthropic", "gemini", "auto"}
"""Read from a provider's structured events (`auto` picks among the text dialects, tested apart)."""

_CALLS = [
    ToolCall(id="c1", name="get_weather", arguments={"city": "Paris", "days": 3, "units": ["c", "f"]}),
    ToolCall(id="c2", name="note", arguments={"text": 'a "quoted" } brace and </ok>', "n": None}),
]


def _output(dialect: str) -> str:
    return "Checking the forecast.\n" + get_dialect(dialect).render_calls(_CALLS)


def _rebuilt(events: list[ParseEvent]) -> dict[str, Any]:
    """What the events say, checked to be in order: each call announced before its fragments and completion."""
    content: list[str] = []
    reasoning: list[str] = []
    names: dict[str, str] = {}
    fragments: dict[str, list[str]] = {}
    calls: list[ToolCall] = []
    errors: list[str] = []
    for e in events:
        if isinstance(e, TextDelta):
            content.append(e.text)
        elif isinstance(e, ReasoningDelta):
            reasoning.append(e.text)
        elif isinstance(e, CallStarted):
            assert e.id not in names, f"{e.id} announced twice"
            names[e.id] = e.name
            fragments[e.id] = []
        elif isinstance(e, CallDelta):
            assert e.id in names, f"fragment of {e.id} before it was announced"
            assert e.id not in {c.id for c in calls}, f"fragment of {e.id} after it completed"
            fragments[e.id].append(e.arguments_delta)
        elif isinstance(e, CallCompleted):
            call = e.call
            assert names.get(call.id) == call.name, f"{call.id} completed without its announcement"
            assert json.loads("".join(fragments[call.id])) == call.arguments
            calls.append(call)
        else:
            errors.append(e.error.message)
    return {"content": "".join(content), "reasoning": "".join(reasoning), "calls": calls, "errors": errors}


def _expected(result: ParseResult) -> dict[str, Any]:
    return {
        "content": result.content,
        "reasoning": result.reasoning or "",
        "calls": result.calls,
        "errors": [e.message for e in result.errors],
    }


def _stream(text: str, dialect: str, cuts: list[int]) -> tuple[ParseResult, list[ParseEvent]]:
    p = stream_parser(dialect)
    events: list[ParseEvent] = []
    last = 0
    for cut in [*cuts, len(text)]:
        events += p.feed(text[last:cut])
        last = cut
    events += p.close()
    return p.result, events


TEXT_DIALECTS = [d for d in dialect_names() if d not in NATIVE]


def test_every_text_dialect_is_covered() -> None:
    assert len(TEXT_DIALECTS) >= 40
    for dialect in TEXT_DIALECTS:
        assert [c.name for c in parse(_output(dialect), dialect).calls] == ["get_weather", "note"], dialect


@pytest.mark.parametrize("dialect", TEXT_DIALECTS)
def test_streamed_events_rebuild_the_one_shot_result_at_every_cut(dialect: str) -> None:
    text = _output(dialect)
    whole = parse(text, dialect)
    expected = _expected(whole)
    for i in range(len(text) + 1):
        result, events = _stream(text, dialect, [i])
        assert result == whole, i
        assert _rebuilt(events) == expected, i
    for shift in range(4):
        result, events = _stream(text, dialect, list(range(shift, len(text), 4)))
        assert result == whole, f"4-character deltas from {shift}"
        assert _rebuilt(events) == expected, f"4-character deltas from {shift}"
