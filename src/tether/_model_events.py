"""What a model streams: a small closed set of typed events, the one vocabulary between providers (which
make them from their wire format) and the parsers (which read them).

They are slotted dataclasses, made once per streamed token, so they are not frozen (a frozen one costs about
twice as much to make): treat them as values. `tether.models` exports them; they live in this leaf so that
the dialects, which read them, need not import the models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Finish",
    "ModelChunk",
    "ReasoningChunk",
    "TextChunk",
    "ToolCallChunk",
    "ToolCallDone",
    "Usage",
]


@dataclass(slots=True)
class TextChunk:
    """Text the model wrote: for a text dialect, the output to parse; for a native one, the visible reply."""

    text: str


@dataclass(slots=True)
class ReasoningChunk:
    """Thinking the provider streams apart from the reply (e.g. `reasoning_content`, Anthropic thinking)."""

    text: str


@dataclass(slots=True)
class ToolCallChunk:
    """A piece of a native tool call: its id and name on the first piece, then fragments of its JSON arguments
    (join them for the arguments' JSON text)."""

    index: int | str
    """Which call of the turn this piece belongs to (the provider's index, or its item id)."""
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(slots=True)
class ToolCallDone:
    """The call at `index` is complete. Providers that state a call whole (or repeat it at its end) give its
    id, name and arguments here; arguments already streamed as `ToolCallChunk`s are not read again."""

    index: int | str
    id: str | None = None
    name: str | None = None
    arguments: str | Mapping[str, Any] | None = None


@dataclass(slots=True)
class Usage:
    """Tokens the turn took, as the provider counted them."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(slots=True)
class Finish:
    """The provider ended the turn, with its reason (`stop`, `tool_calls`, `end_turn`, `max_tokens`, ...):
    calls still open are complete."""

    reason: str = ""


ModelChunk = TextChunk | ReasoningChunk | ToolCallChunk | ToolCallDone | Usage | Finish
"""One event of a model's stream."""
