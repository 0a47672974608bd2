"""`pythonic`: `[get_weather(city="Paris"), now()]` (Llama 3.2+/4, BFCL prompt mode); `olmo3_pythonic`.

Python literals are native; JSON's `true`/`false`/`null` are accepted too, as models mix them. A bare call
at the very start of the output (`f(a=1)`) counts as well. `olmo3_pythonic` wraps one call per line in
`<function_calls>...</function_calls>`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._bodies import PythonCalls
from tether.dialects._dialect import Dialect
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener
from tether.dialects._render import python_call
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Olmo3Pythonic", "Pythonic"]

_LIST = re.compile(r"\[\s*[A-Za-z_][\w.:\-]*\s*\(")
_BARE = re.compile(r"[A-Za-z_][\w.:\-]*\(")
_BARE_VIABLE = re.compile(r"[A-Za-z_][\w.:\-]*")
_LIST_VIABLE = re.compile(r"\[\s*(?:[A-Za-z_][\w.:\-]*\s*)?")
_GUESSED = PythonCalls(speculative=True)
"""A region found by its shape alone: if it is no call list after all, it stays text."""


class Pythonic(Dialect):
    """Python call lists."""

    name: ClassVar[str] = "pythonic"

    openers = (
        Opener(
            "",
            balanced=True,
            body=_GUESSED,
            guard=_BARE,
            guard_len=128,
            output_start=True,
            viable=_BARE_VIABLE,
        ),
        Opener("[", balanced=True, body=_GUESSED, guard=_LIST, guard_len=128, viable=_LIST_VIABLE),
        Opener("<|python_start|>", "drop"),
        Opener("<|python_end|>", "drop"),
        THINK,
    )

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


class Olmo3Pythonic(Dialect):
    """OLMo 3: pythonic calls, one per line, inside `<function_calls>`."""

    name: ClassVar[str] = "olmo3_pythonic"

    openers = (Opener("<function_calls>", ends=("</function_calls>",), body=PythonCalls()), THINK)

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
