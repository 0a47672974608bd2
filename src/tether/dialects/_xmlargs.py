"""Parameter values that XML-like formats carry as text, typed by the tool's schema."""

from __future__ import annotations

from typing import Any

from tether.dialects._tools import ToolIndex, coerce_text_value
from tether.types import Repair

__all__ = ["typed_arguments"]


def typed_arguments(
    tools: ToolIndex, name: str, pairs: list[tuple[str, str]]
) -> tuple[dict[str, Any], list[Repair]]:
    """`{key: value}` with each text value coerced to its schema type (each coercion recorded)."""
    args: dict[str, Any] = {}
    repairs: list[Repair] = []
    for key, raw in pairs:
        value, repair = coerce_text_value(raw, tools.param_schema(name, key), f"$.{key}")
        args[key] = value
        if repair is not None and tools.get(name) is not None:
            repairs.append(repair)
    return args, repairs
