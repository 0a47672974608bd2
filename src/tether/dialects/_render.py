"""Writing calls back as a model would (`Dialect.render_calls`): the value syntaxes formats share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from tether.types import ToolCall

__all__ = [
    "json_call",
    "json_calls",
    "json_text",
    "python_call",
    "python_literal",
    "text_value",
    "xml_function",
]


def json_text(value: Any) -> str:
    """Compact JSON, non-ASCII kept as is (as models write it)."""
    return json.dumps(value, ensure_ascii=False)


def json_call(call: ToolCall, *, args_key: str = "arguments", name_key: str = "name") -> str:
    """`{"name": ..., "arguments": {...}}` as JSON text."""
    return json_text({name_key: call.name, args_key: call.arguments})


def json_calls(calls: Sequence[ToolCall], *, args_key: str = "arguments", name_key: str = "name") -> str:
    """A JSON list of `{"name": ..., "arguments": {...}}` calls."""
    return json_text([{name_key: c.name, args_key: c.arguments} for c in calls])


def text_value(value: Any) -> str:
    """A parameter value as XML-like formats write it: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json_text(value)


def python_literal(value: Any) -> str:
    """A Python literal for a JSON value (dict keys are strings)."""
    if isinstance(value, dict):
        items = cast("dict[str, Any]", value).items()
        return "{" + ", ".join(f"{k!r}: {python_literal(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in cast("list[Any]", value)) + "]"
    return repr(value)


def python_call(call: ToolCall) -> str:
    """`name(key=value, ...)` with Python literals."""
    args = ", ".join(f"{k}={python_literal(v)}" for k, v in call.arguments.items())
    return f"{call.name}({args})"


def xml_function(call: ToolCall, *, value_lines: bool = True) -> str:
    """`<function=name><parameter=key>value</parameter></function>`, each value on lines of its own when
    `value_lines` (as Qwen3-Coder writes them)."""
    nl = "\n" if value_lines else ""
    params = "".join(
        f"<parameter={k}>{nl}{text_value(v)}{nl}</parameter>\n" for k, v in call.arguments.items()
    )
    return f"<function={call.name}>\n{params}</function>"
