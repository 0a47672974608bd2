"""The conversation as a text dialect's model reads it, converted once per message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from tether import _wire
from tether.dialects import get_dialect
from tether.types import AssistantMessage, Message, ToolResultMessage, UserMessage

__all__ = ["TextView"]


class TextView:
    """The conversation as a text dialect's model reads it: the model's own output as it wrote it, and tool
    results as one user message in the dialect's feedback format. Kept up to date as the conversation grows,
    so each message is converted once (converting it all again every turn made long runs quadratic)."""

    def __init__(self, dialect: str):
        self.dialect = dialect
        self._render = get_dialect(dialect).render_results
        """`render_results(dialect, ...)`, its dialect looked up once (a registry lookup a turn otherwise)."""
        self.converted: list[Message] = []
        self.seen = 0
        self.results: list[ToolResultMessage] = []
        """Results at the end of what was seen, not yet followed by another message."""
        self._rendered: UserMessage | None = None
        """`results` as their user message, once made: a turn's request shows it, the next turn keeps it."""

    def of(self, messages: Sequence[Message]) -> list[Message]:
        """`messages` (the conversation seen before, grown) as the model reads it; a new list each time."""
        # A message's `kind` says its type (the `Message` union is discriminated by it, and a subclass keeps
        # it): read instead of `isinstance`, which a pydantic class answers through its metaclass (~0.5k
        # instructions each, two or three a turn).
        for message in messages[self.seen :]:
            kind = message.kind
            if kind == "tool_result":
                self.results.append(cast("ToolResultMessage", message))
                self._rendered = None
                continue
            if self.results:
                self.converted.append(self._results())
                self.results, self._rendered = [], None
            if kind == "assistant" and (raw := cast("AssistantMessage", message).raw) is not None:
                message = _wire.assistant_text(raw)  # the model's output as it wrote it
            self.converted.append(message)
        self.seen = len(messages)
        if not self.results:
            return list(self.converted)
        return [*self.converted, self._results()]

    def _results(self) -> UserMessage:
        if self._rendered is None:
            self._rendered = _wire.user_message(self._render(self.results))
        return self._rendered
