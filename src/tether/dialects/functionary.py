"""Functionary: `functionary_v3_1` (`<function=name>{json}</function>`, Llama 3.1 based) and `functionary_v3_2`
(`>>>name\\n{json}`; `>>>all\\n` is text). Its template writes the first `>>>` itself, so a reply may begin with
`name\\n{json}`: read as a call only when a tool has that name (else it is a heading and JSON).

Both let the `python` tool take raw code instead of JSON (`<|python_tag|>code`, `>>>python\\ncode`): it becomes
the tool's one string argument (`code` when the tool is unknown). After `<|python_tag|>`, a JSON object is a
Llama 3.1 call (`{"name", "arguments"}`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar, cast

from tether._literals import parse_value, skip_ws
from tether.dialects._calls import emit_json_calls
from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import Opener
from tether.dialects._render import json_text
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["FunctionaryV31", "FunctionaryV32"]

_PYTHON = ("python", "ipython")
_NAME = r"[A-Za-z_][\w.\-]*"


def _code_argument(tools: ToolIndex, name: str) -> str:
    """The parameter raw code goes to: the python tool's string parameter, else `code`."""
    for param in tools.parameters(name):
        schema = tools.param_schema(name, param) or {}
        if schema.get("type") == "string":
            return param
    return "code"


def _emit(out: Emitter, name: str, rest: str, span: tuple[int, int], complete: bool) -> None:
    """One call: `rest` holds its JSON arguments (or, for the python tool, raw code)."""
    repairs = [] if complete else [Repair(kind="unterminated", message="the call's end marker is missing")]
    i = skip_ws(rest, 0)
    if i == len(rest):
        out.call(name, {}, span, repairs)
        return
    v = parse_value(rest, i)
    value: Any = v.value
    if v.ok and isinstance(value, dict) and not rest[v.end :].strip():
        out.call(name, cast("dict[str, Any]", value), span, [*repairs, *v.repairs])
    elif name in _PYTHON:
        out.call(name, {_code_argument(out.tools, name): rest.strip()}, span, repairs)
    else:
        out.fail(f"arguments of {name} are not a JSON object", span, rest)


class _Function:
    """`name>{json}`: what follows `<function=`."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        name, sep, rest = text.partition(">")
        if not sep or not re.fullmatch(_NAME, name.strip()):
            out.fail("a call needs <function=name>", span, text)
            return
        _emit(out, name.strip(), rest, span, complete)


class _PythonTag:
    """What follows `<|python_tag|>`: Llama 3.1's JSON call, or raw code for the python tool."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        if text.lstrip().startswith("{"):
            emit_json_calls(out, text, span, complete)
        else:
            _emit(out, "python", text, span, True)


class FunctionaryV31(Dialect):
    """Functionary v3.1 (Llama 3.1)."""

    name: ClassVar[str] = "functionary_v3_1"

    openers = (
        Opener("<function=", ends=("</function>",), body=_Function()),
        Opener("<|python_tag|>", ends=("<|eom_id|>", "<|eot_id|>"), body=_PythonTag()),
        Opener("<|eom_id|>", "drop"),
        Opener("<|eot_id|>", "drop"),
    )

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"You can call these functions:\n{tool_json_lines(tools)}\n\n"
            'To call one, write <function=NAME>{"key": "value"}</function>'
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(result_text(r.envelope) for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<function={c.name}>{json_text(c.arguments)}</function>" for c in calls)


class _Turns:
    """`>>>name\n{json}` turns (`>>>all\n` is text), the first one's `>>>` maybe written by the template."""

    def __init__(self, *, first: bool):
        self.first = first
        """The region began at the output's start, with no `>>>` of its own."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        for n, part in enumerate(text.split(">>>")):
            name, _, rest = part.partition("\n")
            name = name.strip()
            if name == "all":
                out.text(rest)
            elif not n and self.first and out.tools.get(name) is None:
                out.text(part)  # `Result\n{...}` is a heading and JSON unless a tool has that name
            elif re.fullmatch(_NAME, name):
                _emit(out, name, rest, span, True)
            else:  # `>>>` in text, e.g. a Python prompt
                out.text((">>>" if n or not self.first else "") + part)


_V32_OPENERS = (
    # the template wrote the first `>>>`: the reply may begin with `name\n{...}` (or raw python)
    Opener(
        "",
        output_start=True,
        guard=re.compile(rf"(?:{_NAME}\n\s*[{{\[]|python\n)"),
        guard_len=160,
        viable=re.compile(rf"{_NAME}(?:\n\s*)?"),
        body=_Turns(first=True),
    ),
    Opener("all\n", "drop", output_start=True),
    Opener(
        ">>>",
        guard=re.compile(rf">>>{_NAME}\n"),
        guard_len=160,
        viable=re.compile(r">{1,3}[\w.\-]*"),
        body=_Turns(first=False),
    ),
)


class FunctionaryV32(Dialect):
    """Functionary v3.2."""

    name: ClassVar[str] = "functionary_v3_2"

    openers = _V32_OPENERS

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"You can call these functions:\n{tool_json_lines(tools)}\n\n"
            'To call one, write >>>NAME\n{"key": "value"}\nTo write text, write >>>all\nTEXT'
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(result_text(r.envelope) for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f">>>{c.name}\n{json_text(c.arguments)}\n" for c in calls)
