"""One run's conversation: the messages so far, saved to the session as they happen, and read back as the
model sees them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio.to_thread

from tether.loop._session import Session
from tether.loop._text_view import TextView
from tether.types import AssistantMessage, Message, ToolCall, ToolResultMessage

__all__ = ["Conversation", "unanswered_calls"]


def unanswered_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """Calls of the last assistant message that have no result yet: what a run stopped mid-turn (cancelled,
    cut off) still owes the model an answer for."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            answered = {m.call_id for m in messages[index + 1 :] if isinstance(m, ToolResultMessage)}
            return [c for c in message.tool_calls if c.id not in answered]
    return []


class Conversation:
    """The messages of a run (the system message first), kept in the session too when there is one."""

    __slots__ = ("_text", "at_rest", "dialect", "messages", "native", "session")

    def __init__(
        self,
        messages: Sequence[Message],
        session: Session | None,
        dialect: str,
        native: bool,
        at_rest: Callable[[Sequence[Message]], list[Message]] = list,
    ):
        self.messages = list(messages)
        self.session = session
        self.at_rest = at_rest
        """The messages as the session's store may keep them (secrets redacted)."""
        self.native = native
        self.dialect = dialect
        self._text: TextView | None = None

    @property
    def text(self) -> TextView:
        """The conversation as a text dialect's model reads it, kept up to date (made when first read: a
        native model never reads it, a responder only at the end)."""
        if self._text is None:
            self._text = TextView(self.dialect)
        return self._text

    def add(self, *messages: Message) -> Awaitable[None] | None:
        """Append to the conversation, and to the session's store when there is one: returns the store's
        write for the caller to await, None when there is none. Not a coroutine: most runs store nothing,
        and a run adds a message or more every turn."""
        self.messages.extend(messages)
        session = self.session
        if session is None:
            return None
        session.messages.extend(messages)
        if session.store is None:
            return None
        return anyio.to_thread.run_sync(session.store.append, session.id, self.at_rest(messages))

    def for_model(self) -> list[Message]:
        """The messages as the model reads them: as they are (native), or in the text dialect's form."""
        if self.native:
            return list(self.messages)
        text = self._text  # `text`, inlined: a text model's every turn
        if text is None:
            text = self._text = TextView(self.dialect)
        return text.of(self.messages)

    def as_text(self) -> list[Message]:
        """The messages as text, tool results in the dialect's feedback format (for a responder)."""
        return self.text.of(self.messages)

    def turns(self) -> int:
        """Model turns in the conversation so far."""
        return sum(isinstance(m, AssistantMessage) for m in self.messages)

    def unanswered(self) -> list[ToolCall]:
        """Calls of the last assistant message that have no result yet."""
        return unanswered_calls(self.messages)
