"""Test doubles that stream exactly as a provider would: public API for users' tests and ours."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any

import anyio

from tether.dialects import get_dialect
from tether.exceptions import UserError
from tether.models._base import Model, ModelChunk, ModelRequest
from tether.types import ToolCall

__all__ = ["FunctionModel", "ScriptedModel"]

Turn = str | Sequence[ModelChunk | ToolCall]
"""A whole text reply (streamed in pieces of `chunk_size`), or the exact chunks to stream, where a `ToolCall`
(or several in a row: parallel calls) is written as the model would write it in the request's dialect."""


def _chunks(turn: Turn, chunk_size: int, dialect: str | None) -> list[ModelChunk]:
    if isinstance(turn, str):
        return _split(turn, chunk_size)
    chunks: list[ModelChunk] = []
    calls: list[ToolCall] = []
    for item in [*turn, None]:
        if isinstance(item, ToolCall):
            calls.append(item)
            continue
        if calls:
            chunks += _split(_render(calls, dialect), chunk_size)
            calls = []
        if item is not None:
            chunks.append(item)
    return chunks


def _split(text: str, chunk_size: int) -> list[ModelChunk]:
    return [text[i : i + chunk_size] for i in range(0, len(text), chunk_size)] or [""]


def _render(calls: Sequence[ToolCall], dialect: str | None) -> str:
    if dialect is None:
        raise UserError(
            "a scripted turn holds ToolCalls but the request names no dialect to write them in: run the "
            "model through an Agent, or pass ModelRequest(dialect=...)."
        )
    return get_dialect(dialect).render_calls(calls)


class ScriptedModel(Model):
    """Replies with the next scripted turn each time it is asked, streamed as a provider would.

    Args:
        turns: One entry per model turn: text, or a list of chunks (text deltas, provider events, or
            `ToolCall`s, written as the agent's dialect writes calls).
        chunk_size: Characters per text delta when a turn is given as one string.
        native_dialect: Set when the turns are provider events, e.g. `"openai"`.
        delay_s: Pause before each chunk, to make streaming visible in tests and demos.
    """

    def __init__(
        self,
        turns: Iterable[Turn],
        *,
        chunk_size: int = 4,
        native_dialect: str | None = None,
        delay_s: float = 0.0,
        name: str = "scripted",
    ):
        if chunk_size < 1:
            raise UserError("ScriptedModel(chunk_size=...) must be at least 1.")
        self.turns = list(turns)
        self.chunk_size = chunk_size
        self.native_dialect = native_dialect
        self.delay_s = delay_s
        self.name = name
        self.requests: list[ModelRequest] = []
        """Every request received, for assertions."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        if len(self.requests) >= len(self.turns):
            raise UserError(
                f"ScriptedModel ran out of turns: asked for turn {len(self.requests) + 1} of {len(self.turns)}."
            )
        turn = self.turns[len(self.requests)]
        self.requests.append(request)
        for chunk in _chunks(turn, self.chunk_size, request.dialect):
            if self.delay_s:
                await anyio.sleep(self.delay_s)
            yield chunk


ReplyFunction = Callable[[ModelRequest], Turn | Awaitable[Turn]]


class FunctionModel(Model):
    """Replies with whatever `function(request)` returns (sync or async), streamed as a provider would."""

    def __init__(
        self,
        function: ReplyFunction,
        *,
        chunk_size: int = 4,
        native_dialect: str | None = None,
        name: str = "function",
    ):
        self.function = function
        self.chunk_size = chunk_size
        self.native_dialect = native_dialect
        self.name = name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        reply: Any = self.function(request)
        if hasattr(reply, "__await__"):  # an async function's coroutine (inspect.isawaitable is an ABC check)
            reply = await reply
        for chunk in _chunks(reply, self.chunk_size, request.dialect):
            yield chunk
