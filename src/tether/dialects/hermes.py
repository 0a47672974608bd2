"""`hermes`: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes, Qwen 2.5/3, QwQ, SmolLM3).

Thinking inside `<think>...</think>` is reasoning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._bodies import JsonCalls
from tether.dialects._calls import read_whole_call
from tether.dialects._dialect import Dialect
from tether.dialects._events import ParseEvent
from tether.dialects._parser import StreamParser
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener, RegionParser
from tether.dialects._render import json_call
from tether.dialects._results import tool_responses
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Hermes"]

_START, _END = "<tool_call>", "</tool_call>"
_OPENERS = (Opener(_START, ends=(_END,), body=JsonCalls(announce=True)), THINK)


class _Parser(RegionParser):
    """Hermes's region parser, with a shorter way through an output that arrives whole (a model that does not
    stream, `parse`): the calls it begins with, each `<tool_call>` region read by one `read_whole_call` (`JsonAnnouncer.whole`),
    as the general path would read it, without the region bookkeeping around it (~3 µs a turn). Anything
    else (text first, a body that is not strict JSON, a reasoning block, a region left open) goes the general
    way from where it begins; `tests/dialects/test_hermes_whole.py` checks the two give the same events and
    result."""

    __slots__ = ()

    _deferred_mark = "<"
    """Every hermes marker begins with it (`tests/dialects/test_hermes_whole.py` checks it against the plan)."""

    def _scan(self, delta: str) -> list[ParseEvent]:
        emit = self._emit
        if emit.fed or self._at_start or not delta.startswith(_START):  # not a fresh output's first delta
            return RegionParser._scan(self, delta)
        emit.fed = len(delta)
        events: list[ParseEvent] = []
        emit.events = events
        at = 0
        try:
            while True:
                end = delta.find(_END, at + len(_START))
                if end < 0:
                    break
                body, span = delta[at + len(_START) : end], (at, end + len(_END))
                if read_whole_call(emit, body, span) is None:
                    break
                at = span[1]
                following = delta.find("<", at)  # text up to the next call holds no marker: it is content
                if following < 0 or not delta.startswith(_START, following):
                    break
                if following > at:
                    text = delta[at:following]
                    self._last_char = text[-1]
                    emit.text(text)
                    at = following
            if at == len(delta):  # whole calls only: nothing open nor held back, and no plan needed yet
                return events
            if not self._planned:
                self._plan_scanning()
            self._process(delta[at:], at, eof=False)
        except Exception as e:  # a parser bug must not take the caller down with the model's output
            self._internal_error(e)
        self._settle()
        return events


class Hermes(Dialect):
    """Hermes-style tagged JSON calls."""

    name: ClassVar[str] = "hermes"

    openers = _OPENERS

    def stream_parser(self, tools: ToolIndex) -> StreamParser:
        if self.openers is _OPENERS and type(self).parser is None:  # else (reka) the usual way
            return _Parser(self.name, tools, _OPENERS)
        return super().stream_parser(tools)

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            f"{tool_json_lines(tools)}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n"
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return tool_responses(results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<tool_call>\n{json_call(c)}\n</tool_call>\n" for c in calls)
