"""Native structured output (OpenAI, Anthropic, Gemini): JSON objects in, the same ToolCalls out.

A native parser reads the provider's JSON as text — one response, NDJSON, SSE (`data: {...}` lines) or
concatenated objects — or as already-parsed objects via `feed_event`. Tool calls are assembled from
their streamed pieces; `partial_calls()` parses the arguments received so far.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from tether._literals import loads, strict_object
from tether._syntax import Balancer
from tether.dialects._events import ParseEvent, PartialCall
from tether.dialects._parser import StreamParser
from tether.dialects._tools import ToolIndex
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


class NativeParser(StreamParser):
    """Splits the text into JSON values and hands each object to `on_event`."""

    def __init__(self, dialect: str, tools: ToolIndex):
        super().__init__(dialect, tools)
        self._balancer: Balancer | None = None
        self._parts: list[str] = []
        self._start = 0
        self._pending: dict[Any, PendingCall] = {}

    # -------------------------------------------------------------------------------------------- input

    def feed_event(self, event: Any) -> list[ParseEvent]:
        """Feed one already-parsed event: a dict, or an SDK object with `model_dump()`."""
        self._emit.events = []
        if type(event) is not dict:  # the usual case first: an ABC check costs more than the rest
            if hasattr(event, "model_dump"):
                event = event.model_dump(exclude_none=True)
            if not isinstance(event, Mapping):
                return self._emit.events
        if not self._broken:
            try:
                self.on_event(cast(Mapping[str, Any], event))
            except Exception as e:  # a parser bug must not take the caller down with the model's output
                self._internal_error(e)
        return self._emit.events

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
        for v in cast(list[Any], values) if isinstance(values, list) else [values]:
            if isinstance(v, dict):
                self.on_event(cast(dict[str, Any], v))

    def _close(self) -> None:
        if self._balancer is not None and self._parts:
            self._value("".join(self._parts))
        self.finish_all()

    # ------------------------------------------------------------------------------------------- calls

    @abstractmethod
    def on_event(self, event: Mapping[str, Any]) -> None: ...

    def pending(self, key: Any, call_id: str | None = None, name: str | None = None) -> PendingCall:
        call = self._pending.get(key)
        if call is None:
            call = self._pending[key] = PendingCall(self._emit.new_id(call_id))
        if name and not call.name:
            call.name = name
        if call.name and not call.announced:
            call.announced = True
            self._emit.started(call.id, call.name)
        return call

    def add_arguments(self, call: PendingCall, fragment: str) -> None:
        if fragment:
            call.parts.append(fragment)
            if call.announced:
                self._emit.delta(call.id, fragment)

    def finish(self, key: Any) -> None:
        call = self._pending.pop(key, None)
        if call is None:
            return
        if not call.name:
            self._emit.fail("a tool call without a name", None, "".join(call.parts), call_id=call.id)
            return
        repairs: list[Repair] = []
        if call.arguments is not None:
            args = call.arguments
        else:
            text = "".join(call.parts)
            if not text.strip():
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
                        call_id=call.id,
                    )
                    return
                args, repairs = cast(dict[str, Any], value), parsed.repairs
        if not call.announced:
            self._emit.started(call.id, call.name)
            self._emit.delta(call.id, json.dumps(args, ensure_ascii=False))
        self._emit.call(call.name, args, None, repairs, call_id=call.id, announced=True)

    def finish_all(self) -> None:
        for key in list(self._pending):
            self.finish(key)

    def partial_calls(self) -> list[PartialCall]:
        out: list[PartialCall] = []
        for call in self._pending.values():
            if call.arguments is not None:
                args = call.arguments
            else:
                value: Any = loads("".join(call.parts)).value if call.parts else {}
                args = cast(dict[str, Any], value) if isinstance(value, dict) else {}
            out.append(PartialCall(id=call.id, name=call.name, arguments=args))
        return out


def _next_value(s: str, i: int) -> int:
    a, b = s.find("{", i), s.find("[", i)
    if a < 0:
        return b
    return a if b < 0 else min(a, b)
