"""The face a dialect writes through: `Emitter` records what it reads (text, reasoning, calls, failures).

A parser's caller never sees it (callers get `feed`/`close`/`result`); a dialect's parser reaches it as
`self._emit`, and the helpers that read a format's body take it as their first argument.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from tether import _wire
from tether.dialects._events import (
    CallCompleted,
    CallDelta,
    CallFailed,
    CallStarted,
    ParseError,
    ParseEvent,
    ParseResult,
    ReasoningDelta,
    TextDelta,
)
from tether.dialects._tools import ToolIndex
from tether.types import Provenance, Repair, ToolCall

__all__ = ["Emitter"]

_RAW_LIMIT = 300
_RESULT_FIELDS = frozenset(("dialect", "calls", "content", "reasoning", "errors"))


class Emitter:
    """Where a dialect puts what it reads from one model output; it becomes the parser's events and result.

    Attributes:
        dialect: The dialect's name, recorded in every call's provenance and every error.
        tools: The tools the output may call (for positional arguments and typing text values).
    """

    __slots__ = (
        "announced",
        "calls",
        "content",
        "dialect",
        "errors",
        "events",
        "fed",
        "first_call_at",
        "first_id",
        "ids",
        "next_id",
        "reasoning_parts",
        "suffixes",
        "tools",
    )

    def __init__(self, dialect: str, tools: ToolIndex):
        self.dialect = dialect
        self.tools = tools
        self.events: list[ParseEvent] = []
        """The events of the delta being fed (the parser swaps in a fresh list per delta)."""
        self.content: list[str] = []
        self.reasoning_parts: list[str] | None = None
        self.calls: list[ToolCall] = []
        self.errors: list[ParseError] = []
        self.fed = 0
        """Characters fed so far: the absolute offset of the next delta."""
        self.first_call_at: int | None = None
        """Where the first complete call began."""
        self.announced: str | None = None
        """The id of a call announced before it was read, which the next call or failure takes."""
        self.first_id: str | None = None
        """The first call id given out in this output."""
        self.ids: set[str] | None = None
        """Every call id given out in this output, once there are two: ids are unique within it (most outputs
        hold one call or none, and a parser is made every model turn)."""
        self.next_id = 0
        self.suffixes: dict[str, int] | None = None
        """Per id wanted more than once, the next numbered variant to try (so a thousand calls sharing one
        id cost linear time, not quadratic)."""

    def result(self) -> ParseResult:
        """Everything recorded so far (built from values already valid: `ParseResult(...)` would only check
        them again)."""
        values = {
            "dialect": self.dialect,
            "calls": list(self.calls),
            "content": "".join(self.content),
            "reasoning": None if self.reasoning_parts is None else "".join(self.reasoning_parts),
            "errors": list(self.errors),
        }
        return _wire.built(ParseResult, _RESULT_FIELDS, values)

    def new_id(self, wanted: str | None = None) -> str:
        """An id no earlier call of this output has: `wanted` (the model's or provider's) when it is free, a
        numbered variant of it (`x_2`) when an earlier call took it, else `call_<n>`. A model that gives two
        calls one id must not get one result for both, nor one call run twice."""
        ids = self.ids
        if ids is None:
            first = self.first_id
            if first is None:  # the output's first call: no id to clash with, and no set made (~1.5k
                # instructions; most outputs hold one call, and a parser is made every model turn)
                if wanted:
                    call_id = wanted
                else:
                    call_id = f"call_{self.next_id}"
                    self.next_id += 1
                self.first_id = call_id
                return call_id
            ids = self.ids = {first}
        if wanted:
            call_id = wanted
            if call_id in ids:
                suffixes = self.suffixes
                if suffixes is None:
                    suffixes = self.suffixes = {}
                n = suffixes.get(wanted, 2)
                call_id = f"{wanted}_{n}"
                while call_id in ids:
                    n += 1
                    call_id = f"{wanted}_{n}"
                suffixes[wanted] = n + 1
        else:
            call_id = f"call_{self.next_id}"
            while call_id in ids:
                self.next_id += 1
                call_id = f"call_{self.next_id}"
            self.next_id += 1
        ids.add(call_id)
        return call_id

    def text(self, s: str) -> None:
        """Content the user would see."""
        if s:
            self.content.append(s)
            self.events.append(TextDelta(text=s))

    def reasoning(self, s: str) -> None:
        """Thinking text (an empty `s` marks that the output has a reasoning block)."""
        if self.reasoning_parts is None:
            self.reasoning_parts = []
        if s:
            self.reasoning_parts.append(s)
            self.events.append(ReasoningDelta(text=s))

    def started(self, call_id: str, name: str) -> None:
        """Announce a call whose name is known before its arguments are complete."""
        self.events.append(CallStarted(call_id, name))

    def delta(self, call_id: str, arguments_delta: str) -> None:
        """More of an announced call's arguments, as JSON text."""
        if arguments_delta:
            self.events.append(CallDelta(call_id, arguments_delta))

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        span: tuple[int, int] | None,
        repairs: Sequence[Repair] = (),
        *,
        call_id: str | None = None,
        announced: bool = False,
        **extra: Any,
    ) -> ToolCall | None:
        """Record a complete call; emits started/delta events too unless `announced` already did."""
        early = self.announced if call_id is None else None
        if early is not None:  # announced by name: its arguments follow now, whole
            call_id, self.announced = early, None
        if early is None and not announced:
            call_id = self.new_id(call_id)
        elif call_id is None:
            call_id = self.new_id()
        if span is None and not repairs:
            provenance = _plain_provenance(self.dialect)  # frozen, so one serves every such call
        else:
            provenance = _wire.provenance(self.dialect, span, repairs) or Provenance(
                dialect=self.dialect, span=span, repairs=tuple(repairs)
            )
        # the usual call's values are already valid: built, not validated again (~1.5 µs a call)
        tool_call = None if extra else _wire.tool_call(call_id, name, arguments, provenance)
        if tool_call is None:
            try:
                tool_call = ToolCall(
                    id=call_id, name=name, arguments=arguments, provenance=provenance, **extra
                )
            except ValueError as e:
                self.fail(f"invalid call: {e}", span, "", call_id=call_id)
                return None
        if not announced:
            if early is None:
                self.started(call_id, name)
            self.delta(call_id, json.dumps(arguments, ensure_ascii=False))
        self.calls.append(tool_call)
        if self.first_call_at is None:
            self.first_call_at = span[0] if span else self.fed
        self.events.append(CallCompleted(tool_call))
        return tool_call

    def stated(
        self,
        call_id: str,
        name: str,
        text: str,
        arguments: dict[str, Any],
        span: tuple[int, int] | None = None,
    ) -> None:
        """A call stated whole under a fresh `call_id` (from `new_id`): announced, its arguments' JSON `text`
        as one delta, and complete with `arguments`, the object just read from `text` (its keys are `str`,
        and nothing else holds it), found at `span` of the output (a pair of `int`s the parser worked out,
        taken as it is; None: a provider's call, which has none). The same events and call as `started`,
        `delta`, then `call(..., span, call_id=call_id, announced=True)`, with less work
        (`tests/dialects/test_parser.py` checks they agree)."""
        events = self.events
        events.append(CallStarted(call_id, name))
        if text:
            events.append(CallDelta(call_id, text))
        if span is None:
            provenance = _plain_provenance(self.dialect)
            at = self.fed
        else:
            provenance = _wire.spanned(self.dialect, span)
            at = span[0]
        tool_call = _wire.parsed_call(call_id, name, arguments, provenance)
        self.calls.append(tool_call)
        if self.first_call_at is None:
            self.first_call_at = at
        events.append(CallCompleted(tool_call))

    def fail(
        self, message: str, span: tuple[int, int] | None, raw: str, *, call_id: str | None = None
    ) -> None:
        """Record a call that could not be read (the other calls are unaffected)."""
        if call_id is None and self.announced is not None:
            call_id, self.announced = self.announced, None
        if len(raw) > _RAW_LIMIT:
            raw = raw[: _RAW_LIMIT // 2] + " … " + raw[-_RAW_LIMIT // 2 :]
        error = ParseError(message=message, dialect=self.dialect, span=span, raw=raw, call_id=call_id)
        self.errors.append(error)
        self.events.append(CallFailed(error=error))

    def error(self, message: str) -> None:
        """Record a problem that is no one call's, at the current offset."""
        error = ParseError(message=message, dialect=self.dialect, span=(self.fed, self.fed))
        self.errors.append(error)
        self.events.append(CallFailed(error=error))


@functools.cache
def _plain_provenance(dialect: str) -> Provenance:
    return Provenance(dialect=dialect)
