"""`glm45`: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call>` (GLM-4.5/4.6/4.7).

Values are text, typed by the tool's schema (recorded as `coerced`); without one, JSON-looking text is
read as JSON.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._dialect import Dialect
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener, RegionParser
from tether.dialects._render import text_value
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.dialects._xmlargs import typed_arguments
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["Glm45", "arg_pairs"]

_NAME = re.compile(r"[A-Za-z_][\w.\-:]*")


def arg_pairs(body: str, i: int) -> list[tuple[str, str]]:
    """`<arg_key>k</arg_key><arg_value>v</arg_value>` pairs, each bounded by the next key (linear)."""
    out: list[tuple[str, str]] = []
    starts: list[int] = []
    j = body.find("<arg_key>", i)
    while j >= 0:
        starts.append(j)
        j = body.find("<arg_key>", j + 9)
    for n, j in enumerate(starts):
        limit = starts[n + 1] if n + 1 < len(starts) else len(body)
        k = body.find("</arg_key>", j + 9, limit)
        if k < 0:
            continue
        v = body.find("<arg_value>", k + 10, limit)
        if v < 0:
            continue
        e = body.find("</arg_value>", v + 11, limit)
        out.append((body[j + 9 : k].strip(), body[v + 11 : e if e >= 0 else limit]))
    return out


class _Parser(RegionParser):
    openers = (
        Opener(
            "<tool_call>", ends=("</tool_call>",), announce=re.compile(rf"\s*({_NAME.pattern})\s*<arg_key>")
        ),
        THINK,
    )

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        k = body.find("<arg_key>")
        name = (body if k < 0 else body[:k]).strip()
        if not _NAME.fullmatch(name):
            self._emit.fail("a tool call needs a function name", span, body)
            return
        pairs = arg_pairs(body, max(k, 0))
        args, repairs = typed_arguments(self.tools, name, pairs)
        if not complete:
            repairs.append(Repair(kind="unterminated", message="the call's closing tag is missing"))
        self._emit.call(name, args, span, repairs)


class Glm45(Dialect):
    """GLM-4.5 style calls."""

    name: ClassVar[str] = "glm45"

    parser = _Parser

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n<tools>\n"
            f"{tool_json_lines(tools)}\n</tools>\n\nFor each function call, output the function name and arguments "
            "within the following XML format:\n<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n"
            "<arg_value>{arg-value-1}</arg_value>\n...\n</tool_call>"
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(f"<tool_response>\n{result_text(r.envelope)}\n</tool_response>" for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(
            f"<tool_call>{c.name}\n"
            + "".join(
                f"<arg_key>{k}</arg_key>\n<arg_value>{text_value(v)}</arg_value>\n"
                for k, v in c.arguments.items()
            )
            + "</tool_call>\n"
            for c in calls
        )
