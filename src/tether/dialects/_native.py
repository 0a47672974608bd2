"""Native structured output (OpenAI, Anthropic, Gemini): typed model events in, the same ToolCalls out.

A native parser reads what a provider model streams (`TextChunk`, `ToolCallChunk`, ... through `feed_event`),
and the provider's own JSON a user hands tether: as text — one response, NDJSON, SSE (`data: {...}` lines)
or concatenated objects — or as already-parsed objects through `feed_event`. Each dialect says how its
provider's JSON reads as typed events (`read`); from there one path assembles tool calls from their
streamed pieces, and `partial_calls()` parses the arguments received so far.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from tether._literals import loads, strict_object
from tether._model_events import (
    Finish,
    ModelChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    ToolCallDone,
    Usage,
)
from tether._syntax import Balancer
from tether.dialects._events import ParseEvent, PartialCall
from tether.dialects._parser import StreamParser
from tether.dialects._tools import ToolIndex
from tether.exceptions import UserError
from tether.types import Repair

__all__ = ["NativeParser", "PendingCall"]


@dataclass(slots=True)
class PendingCall:
    id: str
    name: str = ""
    parts: list[str] = field(default_factory=list[str])
    arguments: dict[str, Any] | None = None
    """Set when the provider gave the arguments whole (already parsed)."""
    announced: bool = False


_TYPED = frozenset((TextChunk, ReasoningChunk, ToolCallChunk, ToolCallDone, Usage, Finish))


class NativeParser(StreamParser):
    """Reads typed model events; splits JSON text into values and reads each object as typed events."""

    @staticmethod
    @abstractmethod
    def read(event: Mapping[str, Any]) -> list[ModelChunk]:
        """The dialect's reading of one of its provider's JSON objects as typed model events."""

    __slots__ = ("_balancer", "_parts", "_pending", "_start")
    """Slots, as `StreamParser`'s: a dialect's subclass that declares none still never fills a `__dict__` (a
    parser is made every model turn)."""

    def __init__(self, dialect: str, tools: ToolIndex):
        super().__init__(dialect, tools)
        self._balancer: Balancer | None = None
        self._parts: list[str] = []
        self._start = 0
        self._pending: dict[Any, PendingCall] = {}

    # -------------------------------------------------------------------------------------------- input

    def feed_event(self, event: Any) -> list[ParseEvent]:
        """Feed one event: a typed model event (what a provider model streams), or a provider's JSON object
        already parsed (a dict, or an SDK object with `model_dump()`).

        Raises:
            UserError: `event` is neither: a bare `str` (a model's text is a `TextChunk`; JSON text goes to
                `feed`), or any other object (a `Model` must yield `tether.models` events).
        """
        events: list[ParseEvent] = []
        self._emit.events = events
        if self._broken:
            return events
        if type(event) in _TYPED:  # the usual case first: an ABC check costs more than the rest
            try:
                self._apply(event)
            except Exception as e:  # a parser bug must not take the caller down with the model's output
                self._internal_error(e)
            return events
        if type(event) is str:
            raise UserError(
                "feed_event() takes typed model events or a provider's JSON objects, not a str: a model streams "
                "its text as TextChunk(text) (Model.stream yields tether.models events); JSON text goes to feed()"
            )
        if type(event) is not dict and not isinstance(event, Mapping) and not hasattr(event, "model_dump"):
            raise UserError(
                f"feed_event() takes typed model events or a provider's JSON objects, not {event!r} "
                f"({type(event).__name__}): Model.stream yields tether.models events (TextChunk, ToolCallChunk, "
                "ToolCallDone, ...)"
            )
        try:
            value = cast("Any", event)
            if type(value) is not dict and hasattr(value, "model_dump"):  # an SDK object
                value = value.model_dump(exclude_none=True)
            if isinstance(value, Mapping):
                self._on_event(cast("Mapping[str, Any]", value))
        except Exception as e:  # a parser bug must not take the caller down with the model's output
            self._internal_error(e)
        return events

    def _feed(self, delta: str, start: int) -> None:
        i, n = 0, len(delta)
        while i < n:
            if self._balancer is None:
                j = _next_value(delta, i)
                if j < 0:
                    return
                self._balancer, self._start, self._parts = Balancer('"'), start + j, []
                i = j
            k = self._balancer.feed(delta, i)
            if k < 0:
                self._parts.append(delta[i:])
                return
            self._parts.append(delta[i:k])
            self._balancer = None
            self._value("".join(self._parts))
            i = k

    def _value(self, text: str) -> None:
        if text == "[DONE]":  # the SSE end-of-stream sentinel
            return
        parsed = loads(text, strip_extra=False)
        if not parsed.ok:
            self._emit.fail(
                f"invalid JSON from the provider: {parsed.error}",
                (self._start, self._start + len(text)),
                text,
            )
            return
        values: Any = parsed.value
        for v in cast("list[Any]", values) if isinstance(values, list) else [values]:
            if isinstance(v, dict):
                self._on_event(cast("dict[str, Any]", v))

    def _close(self) -> None:
        if self._balancer is not None and self._parts:
            self._value("".join(self._parts))
        self._finish_all()

    # ------------------------------------------------------------------------------------------- calls

    def _on_event(self, event: Mapping[str, Any]) -> None:
        """One provider JSON object, read as the typed events it holds."""
        for chunk in self.read(event):
            self._apply(chunk)

    def _apply(self, event: ModelChunk) -> None:
        """One typed model event: text and reasoning pass on, call pieces are assembled, a finish completes
        what is still open."""
        # exact types, most frequent first: this runs once per streamed token
        if type(event) is TextChunk:
            self._emit.text(event.text)
        elif type(event) is ToolCallChunk:
            if event.id:  # a new call begins
                self._begins(event.index, event.id)
            self._add_arguments(self._pending_call(event.index, event.id, event.name), event.arguments)
        elif type(event) is ToolCallDone:
            if event.index not in self._pending:
                if event.name:  # a call stated whole (the usual case): nothing to assemble
                    self._whole(event)
                    return
                if event.id is event.arguments is None and event.name is None:
                    return  # the end of a block that was no call (Anthropic ends text blocks too)
            call = self._pending_call(event.index, event.id, event.name)
            arguments = event.arguments
            if arguments is not None and not call.parts and call.arguments is None:
                if isinstance(arguments, str):
                    self._add_arguments(call, arguments)
                else:
                    call.arguments = dict(arguments)
            self._finish(event.index)
        elif type(event) is ReasoningChunk:
            self._emit.reasoning(event.text)
        elif type(event) is Finish:
            self._finish_all()

    def _begins(self, index: int | str, call_id: str) -> None:
        """Call `index` begins. A call that held the index before is done; and providers stream parallel calls
        one after another, so calls of lower index whose arguments are already complete JSON are done too, and
        can start while the model goes on."""
        held = self._pending.get(index)
        if held is not None and held.id != call_id:
            self._finish(index)  # a new call reusing the index
        if not isinstance(index, int):
            return
        earlier = [k for k in self._pending if isinstance(k, int) and k < index]
        for other in earlier:
            parts = self._pending[other].parts
            parsed = loads("".join(parts), strip_extra=False) if parts else None
            if parsed is not None and parsed.ok and not parsed.repairs:
                self._finish(other)

    def _pending_call(self, key: Any, call_id: str | None = None, name: str | None = None) -> PendingCall:
        call = self._pending.get(key)
        if call is None:
            call = self._pending[key] = PendingCall(self._emit.new_id(call_id))
        if name and not call.name:
            call.name = name
        if call.name and not call.announced:
            call.announced = True
            self._emit.started(call.id, call.name)
        return call

    def _add_arguments(self, call: PendingCall, fragment: str) -> None:
        if fragment:
            call.parts.append(fragment)
            if call.announced:
                self._emit.delta(call.id, fragment)

    def _finish(self, key: Any) -> None:
        call = self._pending.pop(key, None)
        if call is None:
            return
        if not call.name:
            self._emit.fail("a tool call without a name", None, "".join(call.parts), call_id=call.id)
            return
        self._complete(call.id, call.name, call.arguments, "".join(call.parts), call.announced)

    def _whole(self, event: ToolCallDone) -> None:
        """A call the provider states whole, not streamed before: announced, then complete, as if its pieces
        had streamed (`CallStarted`, its arguments' text as one `CallDelta`, `CallCompleted`)."""
        emit, name = self._emit, cast("str", event.name)
        call_id = emit.new_id(event.id)
        arguments = event.arguments
        if type(arguments) is str and (parsed := strict_object(arguments)) is not None:
            emit.stated(call_id, name, arguments, parsed)  # the usual case: strict JSON, nothing to repair
            return
        emit.started(call_id, name)
        if arguments is None or isinstance(arguments, str):
            if arguments:
                emit.delta(call_id, arguments)
            self._complete(call_id, name, None, arguments or "", announced=True)
        else:
            self._complete(call_id, name, dict(arguments), "", announced=True)

    def _complete(
        self, call_id: str, name: str, arguments: dict[str, Any] | None, text: str, announced: bool
    ) -> None:
        """A call is complete: its arguments given whole, or read from their JSON `text`; one not announced yet
        is announced now, with its arguments as JSON."""
        repairs: list[Repair] = []
        if arguments is not None:
            args = arguments
        elif not text.strip():
            args = {}
        elif (strict := strict_object(text)) is not None:  # what providers send: no repair needed
            args = strict
        else:
            parsed = loads(text)
            value: Any = parsed.value
            if not parsed.ok or not isinstance(value, dict):
                self._emit.fail(
                    f"arguments are not a JSON object: {parsed.error or type(value).__name__}",
                    None,
                    text,
                    call_id=call_id,
                )
                return
            args, repairs = cast("dict[str, Any]", value), parsed.repairs
        if not announced:
            self._emit.started(call_id, name)
            self._emit.delta(call_id, json.dumps(args, ensure_ascii=False))
        self._emit.call(name, args, None, repairs, call_id=call_id, announced=True)

    def _finish_all(self) -> None:
        if self._pending:
            for key in list(self._pending):
                self._finish(key)

    def partial_calls(self) -> list[PartialCall]:
        out: list[PartialCall] = []
        for call in self._pending.values():
            if call.arguments is not None:
                args = call.arguments
            else:
                value: Any = loads("".join(call.parts)).value if call.parts else {}
                args = cast("dict[str, Any]", value) if isinstance(value, dict) else {}
            out.append(PartialCall(id=call.id, name=call.name, arguments=args))
        return out


def _next_value(s: str, i: int) -> int:
    a, b = s.find("{", i), s.find("[", i)
    if a < 0:
        return b
    return a if b < 0 else min(a, b)
