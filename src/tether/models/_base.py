"""What the loop needs from a model: a request in, a stream of chunks out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tether.types import Message, ToolSpec

__all__ = ["Model", "ModelChunk", "ModelRequest"]

ModelChunk = str | Mapping[str, Any]
"""A text delta, or one provider event (e.g. an OpenAI chat-completion chunk) for a native dialect."""


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model turn: the conversation so far and, for native tool calling, the tools to offer."""

    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = field(default_factory=tuple[ToolSpec, ...])
    """Offered through the provider's own tool API; empty when the tools are taught in the prompt."""
    system: str = ""
    """The system prompt (tool prompt included for text dialects)."""
    dialect: str | None = None
    """The dialect the loop reads the reply in (a test double writes scripted calls in it)."""


class Model(ABC):
    """A chat model. Subclasses stream one turn; `native_dialect` names the dialect that reads their events."""

    name: str = "model"
    native_dialect: str | None = None
    """`openai`, `anthropic` or `gemini` when the model yields provider events; None when it yields text."""

    @abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Yield the turn's output as it is generated."""
