"""Bare JSON calls in text: `llama3_json` (`{"name", "parameters"}` objects, `<|python_tag|>`),
`json_tool_list` (`[{"name", "parameters"}]` lists) and `xlam` (lists, also in ```json fences,
`<tool_call>` tags or after `[TOOL_CALLS]`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._bodies import JsonCalls
from tether.dialects._dialect import Dialect
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener, RegionParser
from tether.dialects._render import json_call, json_calls
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["OBJECT_GUARD", "OBJECT_VIABLE", "JsonToolList", "Llama3Json", "Xlam"]

OBJECT_GUARD = re.compile(r"\{\s*\"(?:name|function)\"\s*:")
_LIST = re.compile(r"\[\s*\{\s*\"(?:name|function|arguments|parameters)\"\s*:")
_FENCE = re.compile(r"```(?:json)?\s*[\[{]\s*(?:\{\s*)?\"(?:name|function|arguments|parameters)\"")
OBJECT_VIABLE = re.compile(r"\{\s*(?:\"[a-z]{0,10}\"?\s*)?")
_LIST_VIABLE = re.compile(r"\[\s*(?:\{\s*(?:\"[a-z]{0,10}\"?\s*)?)?")


_JSON = JsonCalls(announce=True)


class _Llama3Parser(RegionParser):
    openers = (
        Opener(
            "{", balanced=True, body=_JSON, guard=OBJECT_GUARD, guard_len=24, viable=OBJECT_VIABLE, quotes='"'
        ),
        Opener("<|python_tag|>", "drop"),
        Opener("<|eom_id|>", "drop"),
        Opener("<|eot_id|>", "drop"),
    )

    _after_call: str | None = None
    """Text after a call while it is only whitespace: a ';' next separates calls and is dropped."""

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        self._flush()
        super().on_region(opener, body, span, complete)
        self._after_call = ""

    def plain_text_until(self) -> frozenset[str] | None:
        return self.between_regions() if self._after_call is None else None

    def after_text(self, text: str) -> None:
        held = self._after_call
        if held is None:
            self._emit.text(text)
            return
        text = held + text
        rest = text.lstrip()
        if not rest:
            self._after_call = text
            return
        self._after_call = None
        self._emit.text(rest[1:] if rest[0] == ";" else text)

    def _flush(self) -> None:
        if self._after_call:
            self._emit.text(self._after_call)
        self._after_call = None

    def _close(self) -> None:
        super()._close()
        self._flush()


_PROMPT = "You can call these functions:\n{tools}\n\nTo call functions, reply with {shape} and nothing else."


class Llama3Json(Dialect):
    """Llama 3.1 JSON tool calls."""

    name: ClassVar[str] = "llama3_json"

    parser = _Llama3Parser

    def render_tools(self, tools: ToolIndex) -> str:
        shape = 'a JSON object {"name": function name, "parameters": {argument name: value}}'
        return _PROMPT.format(tools=tool_json_lines(tools), shape=shape)

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(result_text(r.envelope) for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(json_call(c, args_key="parameters") for c in calls)


class JsonToolList(Dialect):
    """A JSON list of `{"name", "parameters"}` calls (tool_choice=required style)."""

    name: ClassVar[str] = "json_tool_list"
    args_key: ClassVar[str] = "parameters"
    """The key its calls hold their arguments under, as its prompt teaches."""

    openers = (
        Opener("[", balanced=True, body=_JSON, guard=_LIST, guard_len=40, viable=_LIST_VIABLE, quotes='"'),
        THINK,
    )

    def render_tools(self, tools: ToolIndex) -> str:
        shape = 'a JSON list [{"name": function name, "parameters": {argument name: value}}, ...]'
        return _PROMPT.format(tools=tool_json_lines(tools), shape=shape)

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(result_text(r.envelope) for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return json_calls(calls, args_key=self.args_key) if calls else ""


class Xlam(JsonToolList):
    """Salesforce xLAM: a JSON list of calls, possibly fenced or tagged."""

    name: ClassVar[str] = "xlam"
    args_key: ClassVar[str] = "arguments"

    openers = (
        Opener("```", ends=("```",), body=JsonCalls(fenced=True), guard=_FENCE, guard_len=48),
        *JsonToolList.openers[:1],
        Opener(
            "{", balanced=True, body=_JSON, guard=OBJECT_GUARD, guard_len=24, viable=OBJECT_VIABLE, quotes='"'
        ),
        Opener("<tool_call>", "drop"),
        Opener("</tool_call>", "drop"),
        Opener("[TOOL_CALLS]", "drop"),
        THINK,
    )

    def render_tools(self, tools: ToolIndex) -> str:
        shape = 'a JSON list [{"name": function name, "arguments": {argument name: value}}, ...]'
        return _PROMPT.format(tools=tool_json_lines(tools), shape=shape)
