"""A stored conversation as seed 004's `chat_message.v2` list: the user's messages, and for each reply its
text and the `{toolType, toolName, input, output}` record of every call made while writing it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tether.store.internal import storable_text
from tether.tools import redact
from tether.types import (
    AssistantMessage,
    ChatMessageV2,
    Message,
    OkEnvelope,
    ToolCallRecord,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)

__all__ = ["chat_messages"]


def chat_messages(
    messages: Sequence[Message],
    prompts: Sequence[str],
    spec_of: Callable[[str], ToolSpec | None],
    *,
    planned: bool = False,
) -> list[ChatMessageV2]:
    """`messages` grouped into turns. A user message is shown when it is one of `prompts` (what users posted,
    in order, as `storable_text` keeps them); the others are the loop's own (reminders, requests for a final response) and stay hidden.
    With `planned` (an agent with a responder) a reply's text is its last message's, the responder's: the
    planner's text is never shown to users."""
    results = {m.call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    out: list[ChatMessageV2] = []
    texts: list[str] = []
    records: list[ToolCallRecord] = []
    waiting = list(reversed(prompts))

    def close_reply() -> None:
        if texts or records:
            text = texts[-1] if planned and texts else "\n\n".join(texts)
            out.append(ChatMessageV2(role="assistant", content=text, toolCalls=list(records)))
        texts.clear()
        records.clear()

    for message in messages:
        if isinstance(message, UserMessage) and waiting and storable_text(message.content) == waiting[-1]:
            waiting.pop()
            close_reply()
            out.append(ChatMessageV2(role="user", content=message.content))
        elif isinstance(message, AssistantMessage):
            if message.content.strip():
                texts.append(message.content.strip())
            for call in message.tool_calls:
                spec = spec_of(call.name)
                result = results.get(call.id)
                records.append(
                    ToolCallRecord(
                        toolType=_tool_type(spec),
                        toolName=call.name,
                        input=redact(call.arguments, spec.input_schema if spec else None),
                        output=None if result is None else _output(result, spec),
                    )
                )
    close_reply()
    return out


def _tool_type(spec: ToolSpec | None) -> str:
    if spec is None:
        return "unknown"
    return str(spec.metadata.get("toolType") or spec.category or "function")


def _output(result: ToolResultMessage, spec: ToolSpec | None) -> Any:
    """The envelope's `data` when the call succeeded, else the whole envelope (as the executor records it)."""
    envelope = result.envelope
    if isinstance(envelope, OkEnvelope):
        return redact(envelope.data, spec.output_schema if spec else None)
    return envelope.model_dump(mode="json", exclude_none=True)
