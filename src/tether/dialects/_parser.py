"""`StreamParser`: the caller's face of a parser (`feed`, `close`, `result`); dialects implement `_feed`/`_close`
and write what they read through `self._emit` (an `Emitter`), which callers cannot reach."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, cast

from tether._model_events import (
    Finish,
    ModelChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    ToolCallDone,
    Usage,
)
from tether.dialects._emitter import Emitter
from tether.dialects._events import ParseEvent, ParseResult, PartialCall
from tether.dialects._tools import ToolIndex
from tether.exceptions import UserError

__all__ = ["StreamParser"]


class StreamParser(ABC):
    """Incremental parser of one model output: `feed(delta)` text as it arrives, then `close()`.

    Attributes:
        dialect: The dialect's name.
        tools: The tools the output may call.
    """

    __slots__ = ("_broken", "_closed", "_emit", "dialect", "tools")
    """Slots, as `feed` reads its state on every delta (a subclass that declares none gets a `__dict__`)."""

    def __init__(self, dialect: str, tools: ToolIndex):
        self.dialect = dialect
        self.tools = tools
        self._emit = Emitter(dialect, tools)
        """Where the dialect records what it reads (never handed to a caller)."""
        self._closed = False
        self._broken = False

    # ------------------------------------------------------------------------------------------ public

    def feed(self, delta: str) -> list[ParseEvent]:
        """Parse the next piece of model output; returns the events it completes."""
        if self._closed:
            raise UserError(
                "feed() after close(): start a new parser with stream_parser(...) for a new output."
            )
        emit = self._emit
        events: list[ParseEvent] = []
        emit.events = events
        if delta and not self._broken:
            start = emit.fed
            emit.fed += len(delta)
            try:
                self._feed(delta, start)
            except Exception as e:  # a parser bug must not take the caller down with the model's output
                self._internal_error(e)
        return events

    def feed_event(self, event: ModelChunk | Any) -> list[ParseEvent]:
        """Feed one typed model event (what `Model.stream` yields): text goes through `feed`, reasoning the
        provider streams apart is kept as reasoning, usage and finish change nothing here, and a native call
        (`ToolCallDone`) is reported as a call that could not be read (a text dialect runs only calls written
        in its text). Native dialects (openai, anthropic, gemini) assemble tool-call events instead, and read a
        provider's JSON objects.

        Raises:
            UserError: `event` is no model event (e.g. a bare `str` from a `Model` written before models
                streamed typed events, or a provider's JSON object, which only a native dialect reads).
        """
        if type(event) is TextChunk:
            return self.feed(event.text)
        if type(event) is ReasoningChunk:
            events: list[ParseEvent] = []
            self._emit.events = events
            self._emit.reasoning(event.text)
            return events
        kind = type(cast("object", event))
        if kind is Usage or kind is Finish:
            return []
        if kind is ToolCallChunk or kind is ToolCallDone:  # a text dialect's model is offered no tools
            return self._native_call(cast("ToolCallChunk | ToolCallDone", event))
        raise UserError(
            f"feed_event() takes typed model events, not a {kind.__name__}: a model streams its text as "
            "TextChunk(text) (Model.stream yields tether.models events), and a provider's JSON objects are read "
            "by a native dialect (openai, anthropic, gemini)"
        )

    def _native_call(self, event: ToolCallChunk | ToolCallDone) -> list[ParseEvent]:
        """A native call reached a text dialect (a provider or a test double sent one anyway): it is not run,
        as this dialect runs only calls written in its text, but it is never dropped unseen: it is reported
        once, by its name (the piece that names it), as a call that could not be read."""
        events: list[ParseEvent] = []
        if event.name is None:
            return events
        self._emit.events = events
        message = (
            f"a native tool call ({event.name}) arrived, but calls are read as text written in the "
            f"{self.dialect} dialect, so it was not run: write the call in the text"
        )
        key = str(event.id if event.id is not None else event.index)
        if not any(e.call_id == key and e.message == message for e in self._emit.errors):
            self._emit.fail(message, None, "", call_id=key)
        return events

    def close(self) -> list[ParseEvent]:
        """Mark the end of the output: unfinished calls are completed (repaired) or reported as failed."""
        if self._closed:
            return []
        events: list[ParseEvent] = []
        self._emit.events = events
        self._guarded(self._close)
        self._closed = True
        return events

    @property
    def result(self) -> ParseResult:
        """Everything parsed so far (the whole result once `close()` has been called)."""
        return self._emit.result()

    @property
    def first_call_at(self) -> int | None:
        """Where the first complete call began, if one has (`auto` chooses the format that read one first)."""
        return self._emit.first_call_at

    @property
    def reasoned(self) -> bool:
        """Whether the output so far has held a reasoning block (`auto` breaks ties with it)."""
        return self._emit.reasoning_parts is not None

    def partial_calls(self) -> list[PartialCall]:
        """Calls still being streamed, with their arguments parsed so far (costs a parse of what they hold)."""
        return []

    @property
    def busy_since(self) -> int | None:
        """Where undecided text begins (an open region or held-back marker), or None."""
        return None

    def plain_text_until(self) -> frozenset[str] | None:
        """Markers such that a delta holding none of them (nor, at its end, the start of one) would only be
        passed on, whole, as content: feeding it may wait, to be batched with the next. None when any delta
        may matter."""
        return None

    def open_reasoning(self) -> None:
        """Read the output as beginning inside a reasoning block that the chat template already opened (it
        shows only the block's end, e.g. `</think>`). Call before the first `feed`."""
        raise UserError(f"the {self.dialect} dialect has no reasoning block to begin inside")

    # -------------------------------------------------------------------------------------- subclasses

    @abstractmethod
    def _feed(self, delta: str, start: int) -> None: ...

    @abstractmethod
    def _close(self) -> None: ...

    def _guarded(self, step: Callable[[], None]) -> None:
        if self._broken:
            return
        try:
            step()
        except Exception as e:  # a parser bug must not take the caller down with the model's output
            self._internal_error(e)

    def _internal_error(self, e: Exception) -> None:
        self._broken = True
        self._emit.error(
            f"internal parser error ({type(e).__name__}: {e}); the rest of the output was ignored"
        )
