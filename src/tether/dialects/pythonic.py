"""`pythonic`: `[get_weather(city="Paris"), now()]` (Llama 3.2+/4, BFCL prompt mode); `olmo3_pythonic`.

Python literals are native; JSON's `true`/`false`/`null` are accepted too, as models mix them. A bare call
at the very start of the output (`f(a=1)`) counts as well. `olmo3_pythonic` wraps one call per line in
`<function_calls>...</function_calls>`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from tether._syntax import parse_call_list
from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener, RegionParser
from tether.dialects._render import python_literal
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex, bind_arguments
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["Olmo3Pythonic", "Pythonic", "emit_pythonic", "python_call"]

_LIST = re.compile(r"\[\s*[A-Za-z_][\w.:\-]*\s*\(")
_BARE = re.compile(r"[A-Za-z_][\w.:\-]*\(")
_BARE_VIABLE = re.compile(r"[A-Za-z_][\w.:\-]*")
_LIST_VIABLE = re.compile(r"\[\s*(?:[A-Za-z_][\w.:\-]*\s*)?")


def emit_pythonic(out: Emitter, body: str, span: tuple[int, int], complete: bool, speculative: bool) -> None:
    """Record the calls of a pythonic call list; a speculative region that is no call list stays text."""
    calls, error, repairs = parse_call_list(body)
    if error or not calls or (speculative and any(c.error for c in calls) and len(calls) == 1):
        if speculative and not any(not c.error for c in calls):
            out.text(body)
            return
        if error or not calls:
            out.fail(error or "no call found", span, body)
            return
    extra: list[Repair] = list(repairs)
    if not complete and not extra:
        extra.append(Repair(kind="unterminated", message="the call list's end marker is missing"))
    for c in calls:
        cspan = (span[0] + c.start, span[0] + c.end) if speculative or out.dialect == "pythonic" else span
        if c.error:
            out.fail(c.error, cspan, body[c.start : c.end + 1])
            continue
        args, bind_repairs, bind_error = bind_arguments(c, out.tools)
        if bind_error:
            out.fail(bind_error, cspan, body[c.start : c.end])
            continue
        out.call(c.name, args, cspan, [*extra, *c.repairs, *bind_repairs])


def python_call(call: ToolCall) -> str:
    """`name(key=value, ...)` with Python literals."""
    args = ", ".join(f"{k}={python_literal(v)}" for k, v in call.arguments.items())
    return f"{call.name}({args})"


class _PythonicParser(RegionParser):
    openers = (
        Opener(
            "", balanced=True, guard=_BARE, guard_len=128, output_start=True, viable=_BARE_VIABLE, tag="bare"
        ),
        Opener("[", balanced=True, guard=_LIST, guard_len=128, viable=_LIST_VIABLE, tag="list"),
        Opener("<|python_start|>", "drop"),
        Opener("<|python_end|>", "drop"),
        THINK,
    )

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        emit_pythonic(self._emit, body, span, complete, speculative=True)


class Pythonic(Dialect):
    """Python call lists."""

    name: ClassVar[str] = "pythonic"

    parser = _PythonicParser

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            "You can call these functions. To call, reply with only a Python list of calls: "
            "[func_name1(param1=value1, param2=value2), func_name2(param=value)]\n\n"
            f"{tool_json_lines(tools)}"
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(f"{r.name}(...) -> {result_text(r.envelope)}" for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return f"[{', '.join(python_call(c) for c in calls)}]" if calls else ""


class _OlmoParser(RegionParser):
    openers = (
        Opener("<function_calls>", ends=("</function_calls>",)),
        THINK,
    )

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        emit_pythonic(self._emit, body, span, complete, speculative=False)


class Olmo3Pythonic(Dialect):
    """OLMo 3: pythonic calls, one per line, inside `<function_calls>`."""

    name: ClassVar[str] = "olmo3_pythonic"

    parser = _OlmoParser

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            "You can call these functions. To call, write one Python call per line inside "
            "<function_calls></function_calls>, e.g.\n<function_calls>\nfunc_name(param1=value1)\n"
            f"</function_calls>\n\n{tool_json_lines(tools)}"
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(
            f"<function_results>\n{result_text(r.envelope)}\n</function_results>" for r in results
        )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        if not calls:
            return ""
        return "<function_calls>" + "\n".join(python_call(c) for c in calls) + "</function_calls>"
