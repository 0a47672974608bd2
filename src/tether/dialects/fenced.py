"""`fenced`: seed 003's ```` ```tool\\nreturn fn(args);\\n``` ```` blocks with JavaScript literals.

Arguments are JavaScript-like literals (single, double and backtick strings, numbers, true/false/null/
undefined, objects with unquoted keys, arrays, trailing commas, nesting). Positional arguments map to the
tool's parameters in declaration order; `fn({a: 1})` passes them by name. Several blocks, and several
statements per block, are read in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from tether._literals import skip_ws
from tether._syntax import parse_call
from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._regions import Opener
from tether.dialects._render import json_text
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex, bind_arguments
from tether.dialects._ts_signatures import signature
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["Fenced"]

_KEYWORDS = ("return", "await")
_START = "```tool"


class _Statements:
    """`return fn(args);` statements, one or more, with JavaScript literals."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        base = span[0] + len(_START)
        extra = [] if complete else [Repair(kind="unterminated", message="the closing code fence is missing")]
        i, end = 0, len(text)
        if text[:1] not in "\n\r \t":
            out.fail("a tool block starts with ```tool and a newline", span, text)
            return
        while True:
            i = skip_ws(text, i)
            if i >= end:
                return
            for kw in _KEYWORDS:
                if text.startswith(kw, i) and text[i + len(kw) : i + len(kw) + 1].isspace():
                    i = skip_ws(text, i + len(kw))
            c = parse_call(text, i, end, "js")
            cspan = (base + c.start, base + c.end)
            if c.error:
                out.fail(c.error, cspan, text[c.start : max(c.end, c.start + 1)])
                nl = text.find("\n", max(c.end, i + 1))
                if nl < 0:
                    return
                i = nl + 1
                continue
            args, repairs, error = bind_arguments(c, out.tools)
            if error:
                out.fail(error, cspan, text[c.start : c.end])
            else:
                out.call(c.name, args, cspan, [*extra, *c.repairs, *repairs])
            i = skip_ws(text, c.end)
            if i < end and text[i] == ";":
                i += 1


class Fenced(Dialect):
    """Seed 003's ```tool blocks."""

    name: ClassVar[str] = "fenced"

    openers = (Opener(_START, ends=("```",), body=_Statements()),)

    def render_tools(self, tools: ToolIndex) -> str:
        sigs = [signature(s) for s in tools.specs.values()]
        if "finalResponse" not in tools.specs:
            sigs.append(
                "/** Call when you have what you need: returns the format your final answer must follow. */\n"
                "function finalResponse(): string;"
            )
        return (
            "You can call these TypeScript functions. To call one, write a block (several blocks are fine):\n"
            "```tool\nreturn functionName(arg1, arg2);\n```\n"
            "Arguments are JavaScript literals. Results come back in ```tool_result blocks. "
            "Call finalResponse() when you are ready to answer.\n\n" + "\n\n".join(sigs)
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(
            f"```tool_result {r.name} {r.call_id}\n{result_text(r.envelope)}\n```" for r in results
        )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """One block per call, its arguments passed by name as one object."""
        return "".join(
            f"```tool\nreturn {c.name}({json_text(c.arguments) if c.arguments else ''});\n```\n"
            for c in calls
        )
