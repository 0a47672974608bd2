"""The conversation as a text dialect's model reads it: built without validating again, each batch of
results rendered once, and equal to what validated construction makes."""

from typing import cast

import pytest

from tether import envelopes
from tether.dialects import dialect_names, render_results
from tether.loop._text_view import TextView
from tether.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

CALL = '<tool_call>\n{"name": "lookup", "arguments": {"city": "Oslo"}}\n</tool_call>'


def result(call_id: str, city: str) -> ToolResultMessage:
    return ToolResultMessage(call_id=call_id, name="lookup", envelope=envelopes.ok({"city": city}))


def same(made: Message, validated: Message) -> None:
    assert made == validated
    assert made.model_fields_set == validated.model_fields_set
    assert made.model_dump_json() == validated.model_dump_json()


def test_the_view_equals_validated_construction_and_renders_each_batch_of_results_once() -> None:
    calls = (ToolCall(id="call_0", name="lookup", arguments={"city": "Oslo"}),)
    messages: list[Message] = [
        SystemMessage(content="sys"),
        UserMessage(content="weather?"),
        AssistantMessage(content="", tool_calls=calls, raw=CALL),
        result("call_0", "Oslo"),
    ]
    view = TextView("hermes")
    first = view.of(messages)
    assert first[:2] == messages[:2]
    same(first[2], AssistantMessage(content=CALL))
    same(first[3], UserMessage(content=render_results("hermes", [result("call_0", "Oslo")])))

    messages.append(result("call_1", "Rome"))  # a result added after the view: the batch is rendered again
    second = view.of(messages)
    both = render_results("hermes", [result("call_0", "Oslo"), result("call_1", "Rome")])
    same(second[3], UserMessage(content=both))
    assert second[3] is not first[3]

    messages.append(AssistantMessage(content="Sunny.", raw="Sunny."))
    third = view.of(messages)
    assert third[3] is second[3]  # the batch the last request showed is kept, not rendered again
    same(third[4], AssistantMessage(content="Sunny."))
    assert len(third) == 5


TEXT_DIALECTS = sorted(
    d for d in dialect_names() if d not in {"openai", "anthropic", "gemini"} and not d.startswith("test_")
)


@pytest.mark.parametrize("dialect", TEXT_DIALECTS)
def test_each_turn_shows_the_model_its_output_and_the_results_as_the_dialect_renders_them(
    dialect: str,
) -> None:
    """Turn by turn, as the loop reads it (the conversation grows between requests): every dialect, results
    of each kind, a large one and one with a secret the store redacted."""
    kinds = [
        envelopes.ok({"token": "***", "user": "ann"}),
        envelopes.ok({"rows": list(range(5000)), "text": "é\n\x01 " * 10_000}),
        envelopes.error("NOT_FOUND", "no such city", recoverable=True),
        envelopes.needs({"date": "Which day?"}),
    ]
    messages: list[Message] = [SystemMessage(content="sys"), UserMessage(content="go")]
    view = TextView(dialect)
    for turn, envelope in enumerate(kinds):
        messages.append(AssistantMessage(content="", tool_calls=(), raw=f"{CALL} turn {turn}"))
        batch = [
            ToolResultMessage(call_id=f"c{turn}_{i}", name="lookup", envelope=envelope)
            for i in range(turn % 2 + 1)
        ]
        messages.extend(batch)
        shown = view.of(messages)
        assert len(shown) == 2 + 2 * (turn + 1)
        same(shown[-2], AssistantMessage(content=f"{CALL} turn {turn}"))
        same(shown[-1], UserMessage(content=render_results(dialect, batch)))
        assert [cast("AssistantMessage", m).content for m in shown[2::2]] == [
            f"{CALL} turn {t}" for t in range(turn + 1)
        ]
