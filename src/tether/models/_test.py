"""Test doubles that stream exactly as a provider would: public API for users' tests and ours."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, cast, get_args

import anyio

from tether._model_events import ModelChunk, TextChunk
from tether.dialects import Dialect, NativeParser, get_dialect
from tether.exceptions import UserError
from tether.models._base import Model, ModelRequest
from tether.types import ToolCall

__all__ = ["FunctionModel", "ScriptedModel"]

Turn = str | Sequence[ModelChunk | str | Mapping[str, Any] | ToolCall]
"""A whole text reply (streamed in pieces of `chunk_size`), or the exact chunks to stream: typed events as
they are, text as `TextChunk`s, a provider's JSON object (a dict, with a `native_dialect`) as the typed events
that dialect reads in it, and a `ToolCall` (or several in a row: parallel calls) written as the model would
write it in the request's dialect."""

_ProviderJson = Mapping[str, Any]
"""A provider's JSON object (named once: subscripting `Mapping` in a `cast` costs ~0.2 µs a chunk)."""


def _chunks(turn: Turn, chunk_size: int, dialect: str | None, native: str | None) -> list[ModelChunk]:
    """The turn as the typed events a provider would stream: converted here, at the test double's edge, so
    that what a user writes (text, provider dicts, calls) reaches the loop as every model's output does."""
    if isinstance(turn, str):
        return _split(turn, chunk_size)
    try:
        items = iter(turn)
    except TypeError:
        raise UserError(f"a model turn is {turn!r}: {_TURN}") from None
    chunks: list[ModelChunk] = []
    calls: list[ToolCall] = []
    read: Callable[[Mapping[str, Any]], list[ModelChunk]] | None = None  # looked up once a turn
    for item in items:
        if type(item) is dict and not calls:  # the usual provider JSON object (no ABC check)
            if read is None:
                read = _reader(native)
            chunks += read(cast("_ProviderJson", item))
            continue
        if isinstance(item, ToolCall):
            calls.append(item)
            continue
        if calls:
            chunks += _written(calls, chunk_size, dialect, native)
            calls = []
        if isinstance(item, str):
            chunks.append(TextChunk(item))
        elif isinstance(item, Mapping):
            chunks += _reader(native)(cast("_ProviderJson", item))
        elif type(item) in _EVENTS:
            chunks.append(item)
        elif cast("object", item) is not None:  # a None in a scripted turn is skipped, as it always was
            raise UserError(f"a model turn holds {item!r} ({type(item).__name__}): {_TURN}")
    if calls:
        chunks += _written(calls, chunk_size, dialect, native)
    return chunks


_EVENTS = frozenset(get_args(ModelChunk))
_TURN = (
    "a turn is text, or a list of text, typed model events (tether.models: TextChunk, ReasoningChunk, "
    "ToolCallChunk, ToolCallDone, Usage, Finish), a provider's JSON objects (with native_dialect=...) and "
    "ToolCalls (written in the agent's dialect)."
)


def _split(text: str, chunk_size: int) -> list[ModelChunk]:
    return [TextChunk(text[i : i + chunk_size]) for i in range(0, len(text), chunk_size)] or [TextChunk("")]


def _reader(native: str | None) -> Callable[[Mapping[str, Any]], list[ModelChunk]]:
    """How the model's native dialect reads one of its provider's JSON objects as typed events."""
    if native is None:
        raise UserError(
            "a scripted turn holds a provider's JSON object but the model has no native_dialect to read it "
            "in: pass native_dialect='openai' (or 'anthropic', 'gemini'), or script text and ToolCalls."
        )
    dialect = get_dialect(native)
    kind = type(dialect)
    parser = kind.parser
    if kind.model_events is Dialect.model_events and parser is not None and NativeParser in parser.__mro__:
        # What `Dialect.model_events` does for every event, decided once a turn: its parser's `read` (~1.5k
        # instructions an event less; `tests/models/test_models.py` pins that both read alike).
        return cast("type[NativeParser]", parser).read
    return dialect.model_events  # a dialect's own reading, or the text dialect's refusal on first use


def _written(
    calls: Sequence[ToolCall], chunk_size: int, dialect: str | None, native: str | None
) -> list[ModelChunk]:
    """Calls as the model writes them: text in a text dialect, the provider's events in a native one."""
    if dialect is None:
        raise UserError(
            "a scripted turn holds ToolCalls but the request names no dialect to write them in: run the "
            "model through an Agent, or pass ModelRequest(dialect=...)."
        )
    rendered: object = get_dialect(dialect).render_calls(calls)
    if type(rendered) is not str:  # a dialect of one's own whose render_calls is still a stub
        raise UserError(
            f"the {dialect} dialect's render_calls() returned {rendered!r}, not the calls as text: a scripted "
            "ToolCall is written with it, so it must return what the model would write (parse reads it back)."
        )
    if dialect == native:
        return _reader(native)(json.loads(rendered))
    return _split(rendered, chunk_size)


class ScriptedModel(Model):
    """Replies with the next scripted turn each time it is asked, streamed as a provider would.

    Args:
        turns: One entry per model turn: text, or a list of chunks (text deltas, typed model events,
            provider JSON objects read by `native_dialect`, or `ToolCall`s, written as the agent's dialect
            writes calls).
        chunk_size: Characters per text delta when a turn is given as one string.
        native_dialect: Set when the model offers tools through a provider's API, e.g. `"openai"`: dicts
            in the turns are that provider's JSON.
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
        for chunk in _chunks(turn, self.chunk_size, request.dialect, self.native_dialect):
            if self.delay_s:
                await anyio.sleep(self.delay_s)
            yield chunk


ReplyFunction = Callable[[ModelRequest], Turn | Awaitable[Turn]]


class FunctionModel(Model):
    """Replies with whatever `function(request)` returns (sync or async), streamed as a provider would: text,
    or a list of chunks as `ScriptedModel` takes them (text, typed events, provider dicts, `ToolCall`s)."""

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
        for chunk in _chunks(reply, self.chunk_size, request.dialect, self.native_dialect):
            yield chunk
