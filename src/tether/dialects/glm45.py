"""`glm45`: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call>` (GLM-4.5/4.6/4.7).

Values are text, typed by the tool's schema (recorded as `coerced`); without one, JSON-looking text is
read as JSON.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._bodies import ArgPairs
from tether.dialects._dialect import Dialect
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener
from tether.dialects._render import text_value
from tether.dialects._results import tool_responses
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Glm45"]

_NAME = r"[A-Za-z_][\w.\-:]*"


class Glm45(Dialect):
    """GLM-4.5 style calls."""

    name: ClassVar[str] = "glm45"

    openers = (
        Opener(
            "<tool_call>",
            ends=("</tool_call>",),
            body=ArgPairs(),
            announce=re.compile(rf"\s*({_NAME})\s*<arg_key>"),
        ),
        THINK,
    )

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n<tools>\n"
            f"{tool_json_lines(tools)}\n</tools>\n\nFor each function call, output the function name and arguments "
            "within the following XML format:\n<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n"
            "<arg_value>{arg-value-1}</arg_value>\n...\n</tool_call>"
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return tool_responses(results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(
            f"<tool_call>{c.name}\n"
            + "".join(
                f"<arg_key>{k}</arg_key>\n<arg_value>{text_value(v)}</arg_value>\n"
                for k, v in c.arguments.items()
            )
            + "</tool_call>\n"
            for c in calls
        )
