"""`mistral`: `[TOOL_CALLS]` followed by a JSON list of calls (before v11) or `name{json}` /
`name[ARGS]{json}` / `name[CALL_ID]id[ARGS]{json}` (v11+), repeated."""

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

__all__ = ["Mistral"]

MARK = "[TOOL_CALLS]"
_NAME = re.compile(r"\s*([A-Za-z_][\w.\-:]*)\s*(?:\[CALL_ID\]\s*([^\[{]*?)\s*)?(?:\[ARGS\])?\s*(?=\{)")


class _MistralCalls:
    """What follows `[TOOL_CALLS]` (to the end of the output): a JSON list, or `name[ARGS]{json}` calls, each
    group after a `[TOOL_CALLS]` of its own."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        start = span[0] + len(MARK)
        for n, seg in enumerate(text.split(MARK)):
            if n == 0 or seg.strip():
                self._segment(out, seg, (start, span[1]))
            start += len(seg) + len(MARK)

    def _segment(self, out: Emitter, seg: str, span: tuple[int, int]) -> None:
        i = skip_ws(seg, 0)
        if i >= len(seg):
            out.fail("[TOOL_CALLS] with no call after it", span, seg)
            return
        if seg[i] in "[{":
            v = parse_value(seg, i)
            tail = seg[v.end :].strip()
            if v.ok and tail and not tail.startswith("</s>"):
                out.text(tail)
            emit_json_calls(out, seg[i : v.end] if v.ok else seg[i:], span, True)
            return
        pos = i
        while pos < len(seg):
            m = _NAME.match(seg, pos)
            if not m:
                j = seg.find("[", pos)
                if j > pos and seg[j] == "[" and parse_value(seg, j).ok:
                    # prose before a JSON list: `junk [{...}] trail`
                    emit_json_calls(
                        out,
                        seg[j:],
                        span,
                        True,
                        extra_repairs=[Repair(kind="stray_text", message="ignored text before the calls")],
                    )
                    return
                out.fail("expected `name{json}` after [TOOL_CALLS]", span, seg[pos:])
                return
            v = parse_value(seg, m.end())
            value: Any = v.value
            if not v.ok or not isinstance(value, dict):
                out.fail(f"arguments of {m.group(1)} are not a JSON object: {v.error}", span, seg[pos:])
                return
            out.call(m.group(1), cast("dict[str, Any]", value), span, v.repairs, call_id=m.group(2) or None)
            pos = skip_ws(seg, v.end)
            if seg.startswith("</s>", pos):
                break


class Mistral(Dialect):
    """Mistral's [TOOL_CALLS] format (old and v11+)."""

    name: ClassVar[str] = "mistral"

    openers = (Opener(MARK, body=_MistralCalls()), Opener("[THINK]", "reasoning", ends=("[/THINK]",)))

    def render_tools(self, tools: ToolIndex) -> str:
        return f"[AVAILABLE_TOOLS]{tool_json_lines(tools)}[/AVAILABLE_TOOLS]"

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "".join(
            f"[TOOL_RESULTS]{r.call_id}[TOOL_CONTENT]{result_text(r.envelope)}[/TOOL_RESULTS]"
            for r in results
        )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"[TOOL_CALLS]{c.name}[ARGS]{json_text(c.arguments)}" for c in calls)
