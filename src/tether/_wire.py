"""The wire types the loop and the executor make on every turn, built from values already valid.

Constructing a pydantic model validates every field (~1 µs each on the bench VM, ~10 objects a tool turn).
Where each value already has its field's type (a `ToolCall` the parser made, an envelope the executor made,
strings), validating again checks nothing, so these builders set the fields directly: the same object,
equal and serialized alike, with the same set fields (`tests/test_wire.py` checks each against validated
construction). Anything from outside (a model's output, a user's value) is validated where it enters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from tether.types import (
    AnyEnvelope,
    AssistantMessage,
    ChainEndEvent,
    ChainStartEvent,
    ChatModelStartEvent,
    ChatModelStreamEvent,
    Provenance,
    Repair,
    ToolCall,
    ToolCallRecord,
    ToolEndEvent,
    ToolResultMessage,
    ToolStartEvent,
    UserMessage,
)

__all__ = [
    "assistant_message",
    "assistant_text",
    "built",
    "chain_end",
    "chain_start",
    "model_start",
    "model_stream",
    "parsed_call",
    "provenance",
    "record",
    "renamed",
    "spanned",
    "tool_call",
    "tool_end",
    "tool_result",
    "tool_start",
    "user_message",
]

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
# BaseModel's slots and instance `__dict__`, set through their descriptors (a third cheaper than
# `object.__setattr__` by name)
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _built(cls: type[M], fields_set: frozenset[str], values: dict[str, Any]) -> M:
    """A `cls` holding `values` (every field, each already valid), as validation would have made it."""
    made = _new(cls)
    _set_dict(made, values)
    _set_fields_set(made, set(fields_set))
    _set_extra(made, None)
    _set_private(made, None)
    return made


built = _built
"""`built(cls, fields_set, values)`: a `cls` holding `values` (every field, in declaration order, each already
valid), as validating `cls(**{k: values[k] for k in fields_set})` makes it: for a package's own wire types."""

_RUN = frozenset(("run_id",))
_RUN_DATA_CALL = frozenset(("run_id", "data", "call"))
_RUN_CALL_ID_ENVELOPE = frozenset(("run_id", "call_id", "envelope"))
_RUN_TOOL_CALLS = frozenset(("run_id", "toolCalls"))
_RUN_DATA = frozenset(("run_id", "data"))
_CHAIN_END = frozenset(("run_id", "data", "toolCalls", "reason"))
_CALL_NAME_ENVELOPE = frozenset(("call_id", "name", "envelope"))
_ASSISTANT = frozenset(("content", "reasoning", "tool_calls", "raw"))
_CONTENT = frozenset(("content",))
_RECORD = frozenset(("toolType", "toolName", "input", "output"))
_CALL = frozenset(("id", "name", "arguments", "provenance"))
_PROVENANCE = frozenset(("dialect", "span", "repairs"))


def chain_start(run_id: str) -> ChainStartEvent:
    """`ChainStartEvent(run_id=run_id)`."""
    return _built(ChainStartEvent, _RUN, {"run_id": run_id, "event": "on_chain_start"})


def tool_start(run_id: str, data: str, call: ToolCall) -> ToolStartEvent:
    """`ToolStartEvent(run_id=run_id, data=data, call=call)`."""
    values = {"run_id": run_id, "event": "on_tool_start", "data": data, "call": call}
    return _built(ToolStartEvent, _RUN_DATA_CALL, values)


def tool_end(run_id: str, call_id: str, envelope: AnyEnvelope) -> ToolEndEvent:
    """`ToolEndEvent(run_id=run_id, call_id=call_id, envelope=envelope)`."""
    values = {"run_id": run_id, "event": "on_tool_end", "call_id": call_id, "envelope": envelope}
    return _built(ToolEndEvent, _RUN_CALL_ID_ENVELOPE, values)


def model_start(run_id: str, records: Sequence[ToolCallRecord]) -> ChatModelStartEvent:
    """`ChatModelStartEvent(run_id=run_id, toolCalls=list(records))`."""
    values = {"run_id": run_id, "event": "on_chat_model_start", "toolCalls": list(records)}
    return _built(ChatModelStartEvent, _RUN_TOOL_CALLS, values)


def model_stream(run_id: str, text: str) -> ChatModelStreamEvent:
    """`ChatModelStreamEvent(run_id=run_id, data=text)`."""
    values = {"run_id": run_id, "event": "on_chat_model_stream", "data": text}
    return _built(ChatModelStreamEvent, _RUN_DATA, values)


def chain_end(run_id: str, data: Any, records: Sequence[ToolCallRecord], reason: str | None) -> ChainEndEvent:
    """`ChainEndEvent(run_id=run_id, data=data, toolCalls=list(records), reason=reason)`; `data` is any value,
    as the field is."""
    values = {
        "run_id": run_id,
        "event": "on_chain_end",
        "data": data,
        "toolCalls": list(records),
        "reason": reason,
    }
    return _built(ChainEndEvent, _CHAIN_END, values)


def tool_result(call_id: str, name: str, envelope: AnyEnvelope) -> ToolResultMessage:
    """`ToolResultMessage(call_id=call_id, name=name, envelope=envelope)`."""
    values = {"kind": "tool_result", "call_id": call_id, "name": name, "envelope": envelope}
    return _built(ToolResultMessage, _CALL_NAME_ENVELOPE, values)


def assistant_message(
    content: str, reasoning: str | None, tool_calls: tuple[ToolCall, ...], raw: str | None
) -> AssistantMessage:
    """`AssistantMessage(content=..., reasoning=..., tool_calls=..., raw=...)`."""
    values = {
        "kind": "assistant",
        "content": content,
        "reasoning": reasoning,
        "tool_calls": tool_calls,
        "raw": raw,
    }
    return _built(AssistantMessage, _ASSISTANT, values)


def assistant_text(content: str) -> AssistantMessage:
    """`AssistantMessage(content=content)`: a text model's output as it wrote it, as the model is shown it
    again every turn."""
    made = _new(AssistantMessage)  # `_built`, inlined: one a text turn
    _set_dict(
        made, {"kind": "assistant", "content": content, "reasoning": None, "tool_calls": (), "raw": None}
    )
    _set_fields_set(made, set(_CONTENT))
    _set_extra(made, None)
    _set_private(made, None)
    return made


def user_message(content: str) -> UserMessage:
    """`UserMessage(content=content)`."""
    made = _new(UserMessage)  # `_built`, inlined: a text turn's results are one
    _set_dict(made, {"kind": "user", "content": content})
    _set_fields_set(made, set(_CONTENT))
    _set_extra(made, None)
    _set_private(made, None)
    return made


def record(tool_type: str, tool_name: str, arguments: dict[str, Any], output: Any) -> ToolCallRecord:
    """`ToolCallRecord(toolType=tool_type, toolName=tool_name, input=arguments, output=output)`; `arguments`
    is copied, as validation copies a dict."""
    made = _new(ToolCallRecord)  # `_built`, inlined: a record a call
    _set_dict(
        made, {"toolType": tool_type, "toolName": tool_name, "input": dict(arguments), "output": output}
    )
    _set_fields_set(made, set(_RECORD))
    _set_extra(made, None)
    _set_private(made, None)
    return made


def tool_call(call_id: str, name: str, arguments: dict[str, Any], provenance: Provenance) -> ToolCall | None:
    """`ToolCall(id=call_id, name=name, arguments=arguments, provenance=provenance)` (its own copy of
    `arguments`, as validation makes), or None when a value is not one validation would keep as it is (a
    key that is not a `str`): the caller then validates, and reports what is wrong."""
    if type(arguments) is not dict or type(name) is not str or type(call_id) is not str:
        return None
    for key in arguments:
        if type(key) is not str:
            return None
    values = {
        "id": call_id,
        "name": name,
        "arguments": dict(arguments),
        "why": None,
        "priority": None,
        "annotations": (),
        "provenance": provenance,
    }
    return _built(ToolCall, _CALL, values)


def parsed_call(call_id: str, name: str, arguments: dict[str, Any], provenance: Provenance) -> ToolCall:
    """`ToolCall(id=call_id, name=name, arguments=arguments, provenance=provenance)` for `arguments` a parser
    has just read from JSON text: a JSON object's keys are `str`, and no one else holds the dict, so it is
    the call's own as it is (no copy, no check of its keys)."""
    made = _new(ToolCall)  # `_built`, inlined: a call a parser reads
    _set_dict(
        made,
        {
            "id": call_id,
            "name": name,
            "arguments": arguments,
            "why": None,
            "priority": None,
            "annotations": (),
            "provenance": provenance,
        },
    )
    _set_fields_set(made, set(_CALL))
    _set_extra(made, None)
    _set_private(made, None)
    return made


def provenance(dialect: str, span: tuple[int, int] | None, repairs: Sequence[Repair]) -> Provenance | None:
    """`Provenance(dialect=dialect, span=span, repairs=tuple(repairs))`, or None when `span` is not None or
    a pair of `int`s, or a repair is not a `Repair`: the caller then validates."""
    if span is not None and (
        type(span) is not tuple or len(span) != 2 or type(span[0]) is not int or type(span[1]) is not int
    ):
        return None
    for repair in repairs:
        if type(repair) is not Repair:
            return None
    return _built(Provenance, _PROVENANCE, {"dialect": dialect, "span": span, "repairs": tuple(repairs)})


def spanned(dialect: str, span: tuple[int, int]) -> Provenance:
    """`Provenance(dialect=dialect, span=span, repairs=())` for a span a parser has just worked out (a pair
    of `int`s: nothing to check, unlike `provenance`'s)."""
    made = _new(Provenance)
    _set_dict(made, {"dialect": dialect, "span": span, "repairs": ()})
    _set_fields_set(made, set(_PROVENANCE))
    _set_extra(made, None)
    _set_private(made, None)
    return made


def renamed(call: ToolCall, call_id: str) -> ToolCall:
    """`call.model_copy(update={"id": call_id})`: the same call under another id."""
    values = call.__dict__.copy()
    values["id"] = call_id
    fields_set = set(call.__pydantic_fields_set__)
    fields_set.add("id")
    made = _new(ToolCall)
    _set_dict(made, values)
    _set_fields_set(made, fields_set)
    _set_extra(made, None)
    _set_private(made, None)
    return made
