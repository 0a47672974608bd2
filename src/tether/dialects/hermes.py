"""`hermes`: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes, Qwen 2.5/3, QwQ, SmolLM3).

Thinking inside `<think>...</think>` is reasoning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._calls import JsonAnnouncer, emit_json_calls
from tether.dialects._dialect import Dialect
from tether.dialects._events import PartialCall
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener, RegionParser
from tether.dialects._render import json_call
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Hermes"]


class _Parser(RegionParser):
    openers = (Opener("<tool_call>", ends=("</tool_call>",)), THINK)
    _announcer: JsonAnnouncer | None = None

    def on_progress(self, opener: Opener, chunk: str, region_start: int) -> None:
        if self._announcer is None:
            self._announcer = JsonAnnouncer(self._emit, len("</tool_call>") - 1)
        self._announcer.progress(chunk)

    def partial_calls(self) -> list[PartialCall]:
        partial = self._announcer.partial() if self._announcer else None
        return [partial] if partial else []

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        announced = self._announcer.finish(body) if self._announcer else None
        self._announcer = None
        emit_json_calls(self._emit, body, span, complete, announced=announced)


class Hermes(Dialect):
    """Hermes-style tagged JSON calls."""

    name: ClassVar[str] = "hermes"

    parser = _Parser

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
            f"{tool_json_lines(tools)}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments within "
            "<tool_call></tool_call> XML tags:\n"
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "\n".join(f"<tool_response>\n{result_text(r.envelope)}\n</tool_response>" for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<tool_call>\n{json_call(c)}\n</tool_call>\n" for c in calls)
