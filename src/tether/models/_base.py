"""What the loop needs from a model: a request in, a stream of typed events out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from tether._model_events import ModelChunk
from tether.types import Message, ToolSpec

__all__ = ["Model", "ModelRequest"]


@dataclass(frozen=True, slots=True, init=False)
class ModelRequest:
    """One model turn: the conversation so far and, for native tool calling, the tools to offer."""

    messages: Sequence[Message]
    """The conversation as the model reads it: for a text dialect, calls as the dialect writes them and results
    as its feedback text (user messages); for a native one, calls and `tool_result` messages."""
    tools: Sequence[ToolSpec] = field(default_factory=tuple[ToolSpec, ...])
    """Offered through the provider's own tool API; empty when the tools are taught in the prompt."""
    system: str = ""
    """The system prompt (tool prompt included for text dialects)."""
    dialect: str | None = None
    """The dialect the loop reads the reply in (a test double writes scripted calls in it)."""

    def __init__(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] = (),
        system: str = "",
        dialect: str | None = None,
    ):
        # The generated `__init__` of a frozen dataclass sets each field through `object.__setattr__` by name
        # (~0.3 µs more a request, one a model turn): the slots' own setters do the same, faster
        # (`tests/models/test_models.py` pins that it makes what the generated one made).
        _set_messages(self, messages)
        _set_tools(self, tools)
        _set_system(self, system)
        _set_dialect(self, dialect)


_set_messages = ModelRequest.__dict__["messages"].__set__
_set_tools = ModelRequest.__dict__["tools"].__set__
_set_system = ModelRequest.__dict__["system"].__set__
_set_dialect = ModelRequest.__dict__["dialect"].__set__


class Model(ABC):
    """A chat model. Subclasses stream one turn as typed events (`TextChunk`, `ReasoningChunk`,
    `ToolCallChunk`, `ToolCallDone`, `Usage`, `Finish`), made from the provider's wire format at its edge."""

    name: str = "model"
    native_dialect: str | None = None
    """`openai`, `anthropic` or `gemini` when tools are offered through the provider's API (the model yields
    tool-call events, read by that dialect); None when the tools are taught in the prompt (a text dialect
    reads the model's `TextChunk`s)."""

    @abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Yield the turn's output as it is generated, as typed events."""
