"""JSON Schema to TypeScript-like type text, for tool prompts (seed 003's signatures)."""

from __future__ import annotations

import json
from typing import Any, cast

from tether.types import ToolSpec

__all__ = ["signature", "ts_type"]


def ts_type(schema: Any, depth: int = 0) -> str:
    """A compact TypeScript type for a JSON Schema."""
    if not isinstance(schema, dict) or depth > 4:
        return "unknown"
    s = cast("dict[str, Any]", schema)
    if "enum" in s and isinstance(s["enum"], list):
        return " | ".join(json.dumps(v) for v in cast("list[Any]", s["enum"])) or "never"
    for key in ("anyOf", "oneOf"):
        if isinstance(s.get(key), list):
            return " | ".join(ts_type(x, depth + 1) for x in cast("list[Any]", s[key]))
    t = s.get("type")
    if isinstance(t, list):
        return " | ".join(ts_type({**s, "type": x}, depth + 1) for x in cast("list[Any]", t))
    if t in ("integer", "number"):
        return "number"
    if t in ("string", "boolean", "null"):
        return str(t)
    if t == "array":
        item = ts_type(s.get("items"), depth + 1)
        return f"({item})[]" if "|" in item else f"{item}[]"
    if t == "object" or "properties" in s:
        props = cast("dict[str, Any]", s.get("properties") or {})
        if not props:
            return "Record<string, unknown>"
        required = set(cast("list[str]", s.get("required") or []))
        inner = "; ".join(
            f"{k}{'' if k in required else '?'}: {ts_type(v, depth + 1)}" for k, v in props.items()
        )
        return "{ " + inner + " }"
    return "unknown"


def signature(spec: ToolSpec, returns: str = "unknown") -> str:
    """`/** doc */ function name(a: string, b?: number): returns;` for one tool."""
    props = cast("dict[str, Any]", spec.input_schema.get("properties") or {})
    required = set(cast("list[str]", spec.input_schema.get("required") or []))
    params = ", ".join(f"{k}{'' if k in required else '?'}: {ts_type(v)}" for k, v in props.items())
    doc = [spec.description.strip()] if spec.description.strip() else []
    for k, v in props.items():
        desc = cast("dict[str, Any]", v).get("description") if isinstance(v, dict) else None
        if desc:
            doc.append(f"@param {k} {str(desc).strip()}")
    if spec.output_schema:
        returns = ts_type(spec.output_schema)
    head = ""
    if len(doc) == 1:
        head = f"/** {doc[0]} */\n"
    elif doc:
        head = "/**\n" + "".join(f" * {line}\n" for line in doc) + " */\n"
    return f"{head}function {spec.name}({params}): {returns};"
