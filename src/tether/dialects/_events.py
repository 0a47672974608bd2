"""What parsing produces: stream events, parse errors and the final `ParseResult` (data, never exceptions).

Stream events are slotted dataclasses, one per delta, so they are not frozen (a frozen one costs twice as
much to make, which streaming pays on every delta): treat them as values. `ParseEvent` validates and
serialises them with pydantic (`TypeAdapter(ParseEvent)`) like any other model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tether.types import ToolCall

__all__ = [
    "CallCompleted",
    "CallDelta",
    "CallFailed",
    "CallStarted",
    "ParseError",
    "ParseEvent",
    "ParseResult",
    "PartialCall",
    "ReasoningDelta",
    "TextDelta",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ParseError(_Frozen):
    """A problem in the model's output: a call that could not be read, with where it was."""

    message: str
    dialect: str
    span: tuple[int, int] | None = None
    """Character offsets `[start, end)` of the offending text in the model's output."""
    raw: str = ""
    """The offending text (at most a few hundred characters of it)."""
    call_id: str | None = None
    """The id the failed call would have had, when the parser had already announced it."""


@dataclass(slots=True)
class TextDelta:
    """Text a user would see, as soon as it can no longer be part of a call."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(slots=True)
class ReasoningDelta:
    """Thinking text, where the format marks it."""

    text: str
    kind: Literal["reasoning"] = "reasoning"


@dataclass(slots=True)
class CallStarted:
    """A call began; its name is known."""

    id: str
    name: str
    kind: Literal["call_started"] = "call_started"


@dataclass(slots=True)
class CallDelta:
    """More of a call's arguments, as JSON text fragments (join them for the arguments' JSON text)."""

    id: str
    arguments_delta: str
    kind: Literal["call_delta"] = "call_delta"


@dataclass(slots=True)
class CallCompleted:
    """A call is complete and parsed (possibly with repairs, see `call.provenance.repairs`)."""

    call: ToolCall
    kind: Literal["call_completed"] = "call_completed"


@dataclass(slots=True)
class CallFailed:
    """A call could not be read; the other calls are unaffected."""

    error: ParseError
    kind: Literal["call_failed"] = "call_failed"


ParseEvent = Annotated[
    TextDelta | ReasoningDelta | CallStarted | CallDelta | CallCompleted | CallFailed,
    Field(discriminator="kind"),
]
"""One event of a streaming parse."""


@dataclass(frozen=True, slots=True)
class PartialCall:
    """A call still being streamed, with the arguments parsed so far."""

    id: str
    name: str
    arguments: dict[str, Any]


class ParseResult(_Frozen):
    """Everything read from one model output."""

    dialect: str
    calls: list[ToolCall] = Field(default_factory=list[ToolCall])
    content: str = ""
    """The text outside tool calls: what the user would see."""
    reasoning: str | None = None
    """Thinking text where the format marks it; `None` when there was none."""
    errors: list[ParseError] = Field(default_factory=list[ParseError])
