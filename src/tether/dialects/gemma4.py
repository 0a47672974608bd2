"""`gemma4`: `<|tool_call>call:name{key:<|"|>text<|"|>,n:5}<tool_call|>` (Gemma 4).

Keys are bare, strings are delimited by `<|"|>`, other values are JSON-like literals.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar, cast

from tether._literals import parse_value, skip_ws
from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import Opener
from tether.dialects._render import json_text
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["Gemma4"]

QUOTE = '<|"|>'
_CALL = re.compile(r"\s*(?:call:)?([A-Za-z_][\w.\-:]*)\s*(?=\{)")


def _unquote(body: str) -> str:
    """Replace `<|"|>text<|"|>` strings with JSON strings (an unclosed one runs to the end)."""
    out: list[str] = []
    i = 0
    while True:
        j = body.find(QUOTE, i)
        if j < 0:
            out.append(body[i:])
            return "".join(out)
        k = body.find(QUOTE, j + len(QUOTE))
        out.append(body[i:j])
        if k < 0:
            out.append(json.dumps(body[j + len(QUOTE) :])[:-1])
            return "".join(out)
        out.append(json.dumps(body[j + len(QUOTE) : k], ensure_ascii=False))
        i = k + len(QUOTE)


def _gemma_value(value: Any) -> str:
    """A value as Gemma 4 writes it: bare keys, strings between `<|"|>` marks, the rest JSON-like."""
    if isinstance(value, dict):
        items = cast("dict[str, Any]", value).items()
        return "{" + ",".join(f"{k}:{_gemma_value(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_gemma_value(v) for v in cast("list[Any]", value)) + "]"
    if isinstance(value, str):
        return QUOTE + value + QUOTE
    return json_text(value)


class _GemmaCalls:
    """`call:name{key:<|"|>text<|"|>,n:5}`, one or more."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        js = _unquote(text)  # JSON-like from here
        extra = [] if complete else [Repair(kind="unterminated", message="the call's end marker is missing")]
        pos, found = 0, False
        while True:
            pos = skip_ws(js, pos)
            if pos >= len(js):
                break
            m = _CALL.match(js, pos)
            if not m:
                out.fail("expected call:name{...}", span, text)
                return
            v = parse_value(js, m.end(), flavor="js")
            value: Any = v.value
            if not v.ok or not isinstance(value, dict):
                out.fail(f"arguments of {m.group(1)} are not an object: {v.error}", span, text)
                return
            found = True
            out.call(m.group(1), cast("dict[str, Any]", value), span, [*extra, *v.repairs])
            pos = v.end
        if not found:
            out.fail("a tool call with no call:name{...}", span, text)


class Gemma4(Dialect):
    """Gemma 4 tool calls."""

    name: ClassVar[str] = "gemma4"

    openers = (
        Opener("<|tool_call>", ends=("<tool_call|>",), body=_GemmaCalls()),
        Opener("<|channel>", "reasoning", ends=("<channel|>",)),
        Opener("<turn|>", "drop"),
    )

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"You can call these functions:\n{tool_json_lines(tools)}\n\nTo call one, write "
            '<|tool_call>call:name{key:<|"|>text<|"|>,number:1}<tool_call|>'
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "".join(
            f"<|tool_response>response:{r.name}{result_text(r.envelope)}<tool_response|>" for r in results
        )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<|tool_call>call:{c.name}{_gemma_value(c.arguments)}<tool_call|>" for c in calls)
