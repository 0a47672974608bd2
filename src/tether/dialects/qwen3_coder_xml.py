"""`qwen3_coder_xml`: `<tool_call><function=f><parameter=p>value</parameter></function></tool_call>`.

Qwen3-Coder, Qwen3.5, Nemotron-3-Nano. Values are text; the tool's schema types them (recorded as
`coerced` repairs); without a schema, text that reads as JSON becomes that value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener, RegionParser
from tether.dialects._render import text_value
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.dialects._xmlargs import typed_arguments
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["Qwen3CoderXml", "read_xml_functions", "xml_function"]

_FUNCTION = re.compile(r"<function=([^>\n]+)>")
_PARAM_END = re.compile(r"</parameter>|(?=<parameter=)|(?=</function>)")


def read_xml_functions(
    out: Emitter, body: str, span: tuple[int, int], complete: bool, *, value_lines: bool = True
) -> None:
    """Record each `<function=...>` of a body (a call without them is an error).

    With `value_lines` the format writes each value on lines of its own (`<parameter=p>\nvalue\n</parameter>`):
    the one newline it adds on each side is not part of the value, any other whitespace is. Without it the
    value is everything between the tags."""
    matches = list(_FUNCTION.finditer(body))
    for n, m in enumerate(matches):
        name = m.group(1).strip()
        limit = matches[n + 1].start() if n + 1 < len(matches) else len(body)
        end = body.find("</function>", m.end(), limit)
        inner = body[m.end() : end if end >= 0 else limit]
        pairs: list[tuple[str, str]] = []
        i = 0
        while True:
            j = inner.find("<parameter=", i)
            if j < 0:
                break
            k = inner.find(">", j)
            if k < 0:
                break
            key = inner[j + 11 : k].strip()
            close = _PARAM_END.search(inner, k + 1)
            stop = close.start() if close else len(inner)
            value = inner[k + 1 : stop]
            if value_lines:
                value = value.removeprefix("\n").removesuffix("\n")
            pairs.append((key, value))
            i = close.end() if close and close.end() > stop else stop
        args, repairs = typed_arguments(out.tools, name, pairs)
        if end < 0 or not complete:
            repairs.append(Repair(kind="unterminated", message="the call's closing tag is missing"))
        out.call(name, args, span, repairs)
    if not matches:
        out.fail("no <function=...> in the tool call", span, body)


def xml_function(call: ToolCall, *, value_lines: bool) -> str:
    """`<function=name><parameter=key>value</parameter></function>`, each value on lines of its own when
    `value_lines` (as Qwen3-Coder writes them)."""
    nl = "\n" if value_lines else ""
    params = "".join(
        f"<parameter={k}>{nl}{text_value(v)}{nl}</parameter>\n" for k, v in call.arguments.items()
    )
    return f"<function={call.name}>\n{params}</function>"


class _Parser(RegionParser):
    openers = (
        Opener("<tool_call>", ends=("</tool_call>",), announce=re.compile(r"\s*<function=([^<>\n]+)>")),
        Opener("<function=", ends=("</function>",), tag="bare", announce=re.compile(r"([^<>\n]+)>")),
        THINK,
    )

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        if opener.tag == "bare":
            body = "<function=" + body + "</function>"
        read_xml_functions(self._emit, body, span, complete)


class Qwen3CoderXml(Dialect):
    """Qwen3-Coder XML calls."""

    name: ClassVar[str] = "qwen3_coder_xml"

    parser = _Parser

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            "# Tools\n\nYou have access to the following functions:\n\n<tools>\n"
            f"{tool_json_lines(tools)}\n</tools>\n\n"
            "If you choose to call a function, reply in this format:\n<tool_call>\n<function=example_function_name>\n"
            "<parameter=example_parameter_1>\nvalue_1\n</parameter>\n</function>\n</tool_call>"
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(f"<tool_response>\n{result_text(r.envelope)}\n</tool_response>" for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<tool_call>\n{xml_function(c, value_lines=True)}\n</tool_call>\n" for c in calls)
