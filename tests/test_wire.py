"""`tether._wire`: each builder makes exactly what validated construction makes, from values already valid."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tether import _wire
from tether.types import (
    AssistantMessage,
    ChainEndEvent,
    ChainStartEvent,
    ChatModelStartEvent,
    ChatModelStreamEvent,
    ErrorEnvelope,
    ErrorInfo,
    NeedsEnvelope,
    OkEnvelope,
    Provenance,
    Repair,
    ToolCall,
    ToolCallRecord,
    ToolEndEvent,
    ToolResultMessage,
    ToolStartEvent,
    UserMessage,
)

CALL = ToolCall(
    id="c1",
    name="add",
    arguments={"a": 1, "b": [2, 3]},
    why="to add",
    provenance=Provenance(dialect="hermes", span=(0, 9), repairs=(Repair(kind="coerced", message="m"),)),
)
RECORDS = [ToolCallRecord(toolType="function", toolName="add", input={"a": 1}, output=3)]
ENVELOPES = [
    OkEnvelope(data={"x": [1, None]}),
    NeedsEnvelope(needs={"date": "Which day?"}),
    ErrorEnvelope(error=ErrorInfo(code="NOT_FOUND", message="no", recoverable=True, suggestion="s")),
]


def same(built: BaseModel, validated: BaseModel) -> None:
    """Equal, of the same type, with the same set fields, and serialized to the same JSON every way."""
    assert type(built) is type(validated)
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    again = type(validated).model_validate_json(built.model_dump_json())
    assert again.model_dump_json() == validated.model_dump_json()


@pytest.mark.parametrize("envelope", ENVELOPES, ids=lambda e: type(e).__name__)
def test_each_event_and_message_equals_its_validated_construction(envelope: Any) -> None:
    same(_wire.chain_start("r1"), ChainStartEvent(run_id="r1"))
    same(_wire.tool_start("r1", "Starting", CALL), ToolStartEvent(run_id="r1", data="Starting", call=CALL))
    same(_wire.tool_end("r1", "c1", envelope), ToolEndEvent(run_id="r1", call_id="c1", envelope=envelope))
    same(_wire.model_start("r1", RECORDS), ChatModelStartEvent(run_id="r1", toolCalls=RECORDS))
    same(_wire.model_start("r1", []), ChatModelStartEvent(run_id="r1", toolCalls=[]))
    same(_wire.model_stream("r1", "tok"), ChatModelStreamEvent(run_id="r1", data="tok"))
    for data in ("5", {"a": 1}, None, OkEnvelope(data=1)):
        same(
            _wire.chain_end("r1", data, RECORDS, "no_calls"),
            ChainEndEvent(run_id="r1", data=data, toolCalls=RECORDS, reason="no_calls"),
        )
    same(
        _wire.tool_result("c1", "add", envelope),
        ToolResultMessage(call_id="c1", name="add", envelope=envelope),
    )
    same(
        _wire.assistant_message("hi", "thought", (CALL,), "raw"),
        AssistantMessage(content="hi", reasoning="thought", tool_calls=(CALL,), raw="raw"),
    )
    same(
        _wire.assistant_message("", None, (), None),
        AssistantMessage(content="", reasoning=None, tool_calls=(), raw=None),
    )
    same(_wire.user_message("go"), UserMessage(content="go"))
    same(_wire.assistant_text("<tool_call>..."), AssistantMessage(content="<tool_call>..."))


def test_a_renamed_call_is_the_model_copy_with_the_new_id() -> None:
    for call in (CALL, ToolCall(id="c2", name="n")):
        renamed = _wire.renamed(call, "c2@3")
        same(renamed, call.model_copy(update={"id": "c2@3"}))
        assert renamed.id == "c2@3"
        assert call.id != "c2@3"  # the original is untouched
        same(renamed, ToolCall.model_validate({**call.model_dump(exclude_unset=True), "id": "c2@3"}))


def test_built_objects_stay_frozen_and_separate() -> None:
    first, second = _wire.model_start("r1", RECORDS), _wire.model_start("r1", RECORDS)
    assert first.toolCalls is not RECORDS
    assert first.model_fields_set is not second.model_fields_set
    with pytest.raises(ValueError, match="frozen"):
        first.run_id = "other"


@pytest.mark.parametrize("output", [3, None, {"x": [1, "é"]}, "text"], ids=repr)
def test_a_record_equals_its_validated_construction_with_its_own_input(output: Any) -> None:
    arguments = {"a": 1, "b": [2]}
    built = _wire.record("function", "add", arguments, output)
    same(built, ToolCallRecord(toolType="function", toolName="add", input=arguments, output=output))
    assert built.input is not arguments  # copied, as validation copies a dict
    with pytest.raises(ValueError, match="frozen"):
        built.toolName = "other"


def test_a_call_and_its_provenance_equal_their_validated_construction() -> None:
    plain = Provenance(dialect="openai")
    for arguments in ({}, {"a": 1, "b": [2, {"c": None}]}, {"ünï": "cödé"}):
        built = _wire.tool_call("c1", "add", arguments, plain)
        assert built is not None
        same(built, ToolCall(id="c1", name="add", arguments=arguments, provenance=plain))
        assert built.arguments is not arguments  # its own copy, as validation makes
    for span, repairs in (((0, 9), [Repair(kind="coerced", message="m")]), (None, ()), ((3, 3), [])):
        made = _wire.provenance("hermes", span, repairs)
        assert made is not None
        same(made, Provenance(dialect="hermes", span=span, repairs=tuple(repairs)))
        built = _wire.tool_call("c1", "add", {"a": 1}, made)
        assert built is not None
        same(built, ToolCall(id="c1", name="add", arguments={"a": 1}, provenance=made))
    for span in ((0, 9), (3, 3)):
        same(_wire.spanned("hermes", span), Provenance(dialect="hermes", span=span, repairs=()))


def test_a_call_read_from_json_equals_its_validated_construction_and_keeps_the_object_read() -> None:
    import json

    plain = Provenance(dialect="openai")
    for text in ("{}", '{"a": 1, "b": [2, {"c": null}]}', '{"\u00fcn\u00ef": "c\u00f6d\u00e9", "n": 1.5e3}'):
        arguments = json.loads(text)
        built = _wire.parsed_call("c1", "add", arguments, plain)
        same(built, ToolCall(id="c1", name="add", arguments=json.loads(text), provenance=plain))
        assert built.arguments is arguments  # the parser's fresh object, held by no one else
        with pytest.raises(ValueError, match="frozen"):
            built.name = "other"


def test_values_validation_would_change_or_refuse_are_left_to_validation() -> None:
    plain = Provenance(dialect="openai")
    assert _wire.tool_call("c1", "add", {1: "x"}, plain) is None  # pyright: ignore[reportArgumentType]
    assert _wire.tool_call("c1", None, {}, plain) is None  # pyright: ignore[reportArgumentType]
    assert _wire.tool_call("c1", "add", [("a", 1)], plain) is None  # pyright: ignore[reportArgumentType]
    assert _wire.provenance("d", [0, 1], ()) is None  # pyright: ignore[reportArgumentType]
    assert _wire.provenance("d", (0, True), ()) is None
    assert _wire.provenance("d", (0, 1, 2), ()) is None  # pyright: ignore[reportArgumentType]
    assert _wire.provenance("d", None, [{"kind": "k", "message": "m"}]) is None  # pyright: ignore[reportArgumentType]


def test_a_parse_result_built_equals_its_validated_construction() -> None:
    from tether.dialects import ParseError, ParseResult, parse

    fields = frozenset(("dialect", "calls", "content", "reasoning", "errors"))
    errors = [ParseError(message="bad", dialect="hermes", span=(1, 2), raw="x")]
    for calls, reasoning, errs in (([CALL], "thought", errors), ([], None, [])):
        values: dict[str, Any] = {
            "dialect": "hermes",
            "calls": calls,
            "content": "hi",
            "reasoning": reasoning,
            "errors": errs,
        }
        same(_wire.built(ParseResult, fields, values), ParseResult(**values))
    # and what a parser returns is what validation makes of the same values
    result = parse(
        '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call> <tool_call>{"name": 3}</tool_call>'
    )
    assert result.calls
    assert result.errors
    same(result, ParseResult(**{k: getattr(result, k) for k in fields}))
    for call in result.calls:
        same(call, ToolCall(**{k: getattr(call, k) for k in call.model_fields_set}))
