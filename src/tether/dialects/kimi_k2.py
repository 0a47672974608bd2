"""`kimi_k2`: `<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{json}<|tool_call_end|>`.

The id the format carries (`functions.name:0`) is the call's id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

from tether._literals import loads
from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import Opener
from tether.dialects._render import json_text
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["KimiK2"]

ARG = "<|tool_call_argument_begin|>"


class _KimiCall:
    """`functions.name:0<|tool_call_argument_begin|>{json}`: the call's id, then its JSON arguments."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        head, sep, rest = text.partition(ARG)
        call_id = head.strip()
        name = call_id.removeprefix("functions.")
        name = name.rsplit(":", 1)[0] if ":" in name else name
        if not sep or not name:
            out.fail(
                "a Kimi tool call needs `functions.name:index` and <|tool_call_argument_begin|>", span, text
            )
            return
        extra = [] if complete else [Repair(kind="unterminated", message="the call's end marker is missing")]
        if not rest.strip():
            out.call(name, {}, span, extra, call_id=call_id or None)
            return
        parsed = loads(rest)
        value: Any = parsed.value
        if not parsed.ok or not isinstance(value, dict):
            out.fail(f"arguments of {name} are not a JSON object: {parsed.error}", span, text)
            return
        args = cast("dict[str, Any]", value)
        if name.isdigit():  # a bare counter: the tool is the one whose parameters fit the arguments
            fits = [
                s.name
                for s in out.tools.specs.values()
                if args and set(args) <= set(out.tools.parameters(s.name))
            ]
            if len(fits) != 1:
                out.fail(f"call {call_id} names no tool and its arguments fit {len(fits)} tools", span, text)
                return
            name = fits[0]
            extra.append(
                Repair(
                    kind="inferred_name", message=f"named the call {name}, the only tool whose parameters fit"
                )
            )
        out.call(name, args, span, [*extra, *parsed.repairs], call_id=call_id or None)


class KimiK2(Dialect):
    """Kimi K2."""

    name: ClassVar[str] = "kimi_k2"

    openers = (
        Opener(
            "<|tool_call_begin|>", ends=("<|tool_call_end|>", "<|tool_calls_section_end|>"), body=_KimiCall()
        ),
        Opener("<|tool_calls_section_begin|>", "drop"),
        Opener("<|tool_calls_section_end|>", "drop"),
        Opener("<think>", "reasoning", ends=("</think>", "<|tool_calls_section_begin|>")),
    )

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"# Tools\n{tool_json_lines(tools)}\n\nTo call tools, write:\n<|tool_calls_section_begin|>"
            f"<|tool_call_begin|>functions.<name>:<n>{ARG}<json arguments><|tool_call_end|><|tool_calls_section_end|>"
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(f"## Return of {r.call_id}\n{result_text(r.envelope)}" for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """Each call's id is the format's own, `functions.<name>:<index>`."""
        if not calls:
            return ""
        body = "".join(
            f"<|tool_call_begin|>functions.{c.name}:{n}<|tool_call_argument_begin|>"
            f"{json_text(c.arguments)}<|tool_call_end|>"
            for n, c in enumerate(calls)
        )
        return f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>"
