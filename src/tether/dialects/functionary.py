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
from tether.dialects._regions import Opener, RegionParser
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
        out.call(name, cast(dict[str, Any], value), span, [*repairs, *v.repairs])
    elif name in _PYTHON:
        out.call(name, {_code_argument(out.tools, name): rest.strip()}, span, repairs)
    else:
        out.fail(f"arguments of {name} are not a JSON object", span, rest)


class _V31Parser(RegionParser):
    openers = (
        Opener("<function=", ends=("</function>",)),
        Opener("<|python_tag|>", ends=("<|eom_id|>", "<|eot_id|>"), tag="python"),
        Opener("<|eom_id|>", "drop"),
        Opener("<|eot_id|>", "drop"),
    )

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        if opener.tag == "python":
            if body.lstrip().startswith("{"):  # Llama 3.1's own form: a JSON call after the tag
                emit_json_calls(self._emit, body, span, complete)
            else:
                _emit(self._emit, "python", body, span, True)
            return
        name, sep, rest = body.partition(">")
        if not sep or not re.fullmatch(_NAME, name.strip()):
            self._emit.fail("a call needs <function=name>", span, body)
            return
        _emit(self._emit, name.strip(), rest, span, complete)


class FunctionaryV31(Dialect):
    """Functionary v3.1 (Llama 3.1)."""

    name: ClassVar[str] = "functionary_v3_1"

    parser = _V31Parser

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"You can call these functions:\n{tool_json_lines(tools)}\n\n"
            'To call one, write <function=NAME>{"key": "value"}</function>'
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(result_text(r.envelope) for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<function={c.name}>{json_text(c.arguments)}</function>" for c in calls)


class _V32Parser(RegionParser):
    openers = (
        # the template wrote the first `>>>`: the reply may begin with `name\n{...}` (or raw python)
        Opener(
            "",
            output_start=True,
            guard=re.compile(rf"(?:{_NAME}\n\s*[{{\[]|python\n)"),
            guard_len=160,
            viable=re.compile(rf"{_NAME}(?:\n\s*)?"),
            tag="calls",
        ),
        Opener("all\n", "drop", output_start=True),
        Opener(
            ">>>",
            guard=re.compile(rf">>>{_NAME}\n"),
            guard_len=160,
            viable=re.compile(r">{1,3}[\w.\-]*"),
            tag="calls",
        ),
    )

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        for n, part in enumerate(body.split(">>>")):
            name, _, rest = part.partition("\n")
            name = name.strip()
            if name == "all":
                self._emit.text(rest)
            elif not n and not opener.start and self.tools.get(name) is None:
                self._emit.text(part)  # `Result\n{...}` is a heading and JSON unless a tool has that name
            elif re.fullmatch(_NAME, name):
                _emit(self._emit, name, rest, span, True)
            else:  # `>>>` in text, e.g. a Python prompt
                self._emit.text((">>>" if n or opener.start else "") + part)


class FunctionaryV32(Dialect):
    """Functionary v3.2."""

    name: ClassVar[str] = "functionary_v3_2"

    parser = _V32Parser

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"You can call these functions:\n{tool_json_lines(tools)}\n\n"
            'To call one, write >>>NAME\n{"key": "value"}\nTo write text, write >>>all\nTEXT'
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(result_text(r.envelope) for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f">>>{c.name}\n{json_text(c.arguments)}\n" for c in calls)
