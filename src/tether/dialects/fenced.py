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
from tether.dialects._regions import Opener, RegionParser
from tether.dialects._render import json_text
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex, bind_arguments
from tether.dialects._ts_signatures import signature
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["Fenced"]

_KEYWORDS = ("return", "await")


class _Parser(RegionParser):
    openers = (Opener("```tool", ends=("```",)),)

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        base = span[0] + len(opener.start)
        extra = [] if complete else [Repair(kind="unterminated", message="the closing code fence is missing")]
        i, end = 0, len(body)
        if body[:1] not in "\n\r \t":
            self._emit.fail("a tool block starts with ```tool and a newline", span, body)
            return
        while True:
            i = skip_ws(body, i)
            if i >= end:
                return
            for kw in _KEYWORDS:
                if body.startswith(kw, i) and body[i + len(kw) : i + len(kw) + 1].isspace():
                    i = skip_ws(body, i + len(kw))
            c = parse_call(body, i, end, "js")
            cspan = (base + c.start, base + c.end)
            if c.error:
                self._emit.fail(c.error, cspan, body[c.start : max(c.end, c.start + 1)])
                nl = body.find("\n", max(c.end, i + 1))
                if nl < 0:
                    return
                i = nl + 1
                continue
            args, repairs, error = bind_arguments(c, self.tools)
            if error:
                self._emit.fail(error, cspan, body[c.start : c.end])
            else:
                self._emit.call(c.name, args, cspan, [*extra, *c.repairs, *repairs])
            i = skip_ws(body, c.end)
            if i < end and body[i] == ";":
                i += 1


class Fenced(Dialect):
    """Seed 003's ```tool blocks."""

    name: ClassVar[str] = "fenced"

    parser = _Parser

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
