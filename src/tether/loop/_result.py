"""What a run produced."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from tether.types import ChainEndEvent, ChatMessageV2, Event, Message

__all__ = ["RunResult"]


@dataclass(slots=True)
class RunResult:
    """What a run produced: its final output, why it ended, the conversation and every event."""

    output: Any
    reason: str
    messages: list[Message]
    events: list[Event] = field(default_factory=list[Event])
    tool_start_lag_s: list[float] = field(default_factory=list[float])
    """For each call started during streaming: seconds from its completion in the stream to its start."""
    error: Exception | None = None
    """What the model (or its provider) raised when the run ended with `model_error`."""

    def chat_message(self) -> ChatMessageV2:
        """The run's answer as seed 004's `chat_message.v2`: its text (JSON for a structured output) and the
        `{toolType, toolName, input, output}` record of every call that ran; as `on_chain_end` shows them
        (secrets redacted: docs/sessions.md), for a client."""
        ends = [e for e in self.events if isinstance(e, ChainEndEvent)]
        records = ends[-1].toolCalls if ends else []
        output = ends[-1].data if ends else self.output
        if isinstance(output, BaseModel):
            content = output.model_dump_json()
        elif isinstance(output, str):
            content = output
        else:
            content = "" if output is None else json.dumps(output, ensure_ascii=False, default=str)
        return ChatMessageV2(role="assistant", content=content, toolCalls=list(records))
