"""The conversation as a text dialect's model reads it, converted once per message."""

from __future__ import annotations

from collections.abc import Sequence

from tether.dialects import render_results
from tether.types import AssistantMessage, Message, ToolResultMessage, UserMessage

__all__ = ["TextView"]


class TextView:
    """The conversation as a text dialect's model reads it: the model's own output as it wrote it, and tool
    results as one user message in the dialect's feedback format. Kept up to date as the conversation grows,
    so each message is converted once (converting it all again every turn made long runs quadratic)."""

    def __init__(self, dialect: str):
        self.dialect = dialect
        self.converted: list[Message] = []
        self.seen = 0
        self.results: list[ToolResultMessage] = []
        """Results at the end of what was seen, not yet followed by another message."""

    def of(self, messages: Sequence[Message]) -> list[Message]:
        """`messages` (the conversation seen before, grown) as the model reads it; a new list each time."""
        for message in messages[self.seen :]:
            if isinstance(message, ToolResultMessage):
                self.results.append(message)
                continue
            if self.results:
                self.converted.append(UserMessage(content=render_results(self.dialect, self.results)))
                self.results = []
            if isinstance(message, AssistantMessage) and message.raw is not None:
                message = AssistantMessage(content=message.raw)
            self.converted.append(message)
        self.seen = len(messages)
        if not self.results:
            return list(self.converted)
        return [*self.converted, UserMessage(content=render_results(self.dialect, self.results))]
