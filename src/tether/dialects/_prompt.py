"""Shared pieces of tool prompts: compact JSON tool listings."""

from __future__ import annotations

import json
from typing import Any

from tether.dialects._tools import ToolIndex

__all__ = ["openai_tool_json", "tool_json_lines"]


def openai_tool_json(tools: ToolIndex) -> list[dict[str, Any]]:
    """Tools as OpenAI function objects (what most open chat templates embed)."""
    return [
        {
            "type": "function",
            "function": {"name": s.name, "description": s.description, "parameters": s.input_schema},
        }
        for s in tools.specs.values()
    ]


def tool_json_lines(tools: ToolIndex) -> str:
    """One compact JSON object per tool, one per line."""
    return "\n".join(
        json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in openai_tool_json(tools)
    )
