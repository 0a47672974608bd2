"""`qwen3_coder_xml`: `<tool_call><function=f><parameter=p>value</parameter></function></tool_call>`.

Qwen3-Coder, Qwen3.5, Nemotron-3-Nano. Values are text; the tool's schema types them (recorded as
`coerced` repairs); without a schema, text that reads as JSON becomes that value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._bodies import XmlFunctions
from tether.dialects._dialect import Dialect
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener
from tether.dialects._render import xml_function
from tether.dialects._results import tool_responses
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Qwen3CoderXml"]


class Qwen3CoderXml(Dialect):
    """Qwen3-Coder XML calls."""

    name: ClassVar[str] = "qwen3_coder_xml"

    openers = (
        Opener(
            "<tool_call>",
            ends=("</tool_call>",),
            body=XmlFunctions(),
            announce=re.compile(r"\s*<function=([^<>\n]+)>"),
        ),
        Opener(
            "<function=",
            ends=("</function>",),
            body=XmlFunctions(bare=True),
            announce=re.compile(r"([^<>\n]+)>"),
        ),
        THINK,
    )

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            "# Tools\n\nYou have access to the following functions:\n\n<tools>\n"
            f"{tool_json_lines(tools)}\n</tools>\n\n"
            "If you choose to call a function, reply in this format:\n<tool_call>\n<function=example_function_name>\n"
            "<parameter=example_parameter_1>\nvalue_1\n</parameter>\n</function>\n</tool_call>"
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return tool_responses(results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<tool_call>\n{xml_function(c, value_lines=True)}\n</tool_call>\n" for c in calls)
