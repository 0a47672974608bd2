"""Calls read out of the upstream's text, as Chat Completions deltas.

Each call's name goes out as soon as the parser announces it (`index`, `id`, `type`, `function.name`,
empty `arguments`); its arguments follow once the call is complete, as the JSON of the arguments tether
read. They are not the model's raw fragments: tether may have repaired them (a trailing comma, single
quotes) or converted them (XML parameters, Python literals), and the client must be able to join its
fragments into valid JSON. A call the parser announced but could not read gets the model's text as its
arguments (invalid JSON, as OpenAI's API passes on a model's malformed arguments) and is reported in
`errors`; one never announced is reported only there.

A request that offers no tools gets its text read in the dialect too, so that reasoning the dialect marks
(`<think>`...) is `reasoning_content`, as it is when tools are offered; a call the model writes anyway is
dropped and reported, as under `tool_choice="none"` (the client has no tool to run it with).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from tether.dialects import (
    CallCompleted,
    CallFailed,
    CallStarted,
    ParseError,
    ParseEvent,
    ReasoningDelta,
    StreamParser,
    TextDelta,
    stream_parser,
)

__all__ = ["CallStream"]


class CallStream:
    """One model output read in a dialect, turned into the deltas of one choice.

    Args:
        dialect: The dialect the upstream writes.
        tools: The tools offered (None when the request offers none: every call is dropped and reported).
        parallel: False keeps only the output's first call (`parallel_tool_calls=false`).
        only: The one tool a named `tool_choice` allows; calls to others are dropped and reported.
        none: `tool_choice="none"`: every call is dropped and reported (the text around it still reads as
            content and reasoning).
        reasoning_open: The output begins inside the dialect's reasoning block.
    """

    def __init__(
        self,
        dialect: str,
        tools: Any,
        *,
        parallel: bool = True,
        only: str | None = None,
        none: bool = False,
        reasoning_open: bool = False,
    ):
        self._parser: StreamParser = stream_parser(dialect, tools, reasoning_open=reasoning_open)
        self._parallel = parallel
        self._only = only
        self._refused = (
            "tool_choice is 'none'" if none else "the request offers no tools" if tools is None else None
        )
        """Why every call is dropped, if they all are."""
        self._index: dict[str, tuple[int, str]] = {}
        """Parser call id -> (index in tool_calls, the id the client sees)."""
        self._dropped: set[str] = set()
        self.tool_calls: list[dict[str, Any]] = []
        """Every call sent, whole (for a non-streamed answer)."""
        self.errors: list[dict[str, Any]] = []
        """Calls that could not be read or were dropped (tether's extension, `tether_errors`)."""

    def feed(self, text: str) -> list[dict[str, Any]]:
        return self._deltas(self._parser.feed(text))

    def close(self) -> list[dict[str, Any]]:
        return self._deltas(self._parser.close())

    def _deltas(self, events: list[ParseEvent]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for event in events:
            match event:
                case TextDelta():
                    out.append({"content": event.text})
                case ReasoningDelta():
                    out.append({"reasoning_content": event.text})
                case CallStarted():
                    if (delta := self._start(event.id, event.name)) is not None:
                        out.append(delta)
                case CallCompleted():
                    call = event.call
                    if call.id not in self._index and call.id not in self._dropped:
                        self._start(call.id, call.name)  # pragma: no cover - every parser announces first
                    if call.id in self._index:
                        out.append(self._arguments(call.id, json.dumps(call.arguments, ensure_ascii=False)))
                case CallFailed():
                    out.extend(self._failed(event.error))
                case _:  # CallDelta: the arguments go out whole once complete (see the module's docstring)
                    pass
        return out

    def _start(self, parser_id: str, name: str) -> dict[str, Any] | None:
        why = self._refused
        if why is None and self._only is not None and name != self._only:
            why = f"tool_choice names {self._only!r}"
        elif why is None and not self._parallel and self._index:
            why = "parallel_tool_calls is false"
        if why is not None:
            self._dropped.add(parser_id)
            self.errors.append({"message": f"dropped a call to {name!r}: {why}", "code": "call_dropped"})
            return None
        index, public_id = len(self._index), f"call_{uuid.uuid4().hex[:24]}"
        self._index[parser_id] = (index, public_id)
        call = {"id": public_id, "type": "function", "function": {"name": name, "arguments": ""}}
        self.tool_calls.append(call)
        return {"tool_calls": [{"index": index, **call, "function": {"name": name, "arguments": ""}}]}

    def _arguments(self, parser_id: str, arguments: str) -> dict[str, Any]:
        index, _ = self._index[parser_id]
        self.tool_calls[index]["function"]["arguments"] += arguments
        return {"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}

    def _failed(self, error: ParseError) -> list[dict[str, Any]]:
        self.errors.append({"message": error.message, "code": "call_unreadable", "raw": error.raw})
        if error.call_id is not None and error.call_id in self._index:
            return [self._arguments(error.call_id, error.raw)]
        return []
