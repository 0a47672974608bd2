"""`hermes`: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes, Qwen 2.5/3, QwQ, SmolLM3).

Thinking inside `<think>...</think>` is reasoning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._bodies import JsonCalls
from tether.dialects._dialect import Dialect
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener
from tether.dialects._render import json_call
from tether.dialects._results import tool_responses
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Hermes"]


class Hermes(Dialect):
    """Hermes-style tagged JSON calls."""

    name: ClassVar[str] = "hermes"

    openers = (Opener("<tool_call>", ends=("</tool_call>",), body=JsonCalls(announce=True)), THINK)

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
        return tool_responses(results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<tool_call>\n{json_call(c)}\n</tool_call>\n" for c in calls)
