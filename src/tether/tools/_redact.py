"""Redaction by schema: values the schema marks secret (`format: password` or `x-secret: true`) never reach
the journal or the records."""

from __future__ import annotations

from typing import Any

from tether.types import JsonSchema

__all__ = ["REDACTED", "redact"]

REDACTED = "***"
_MAX_DEPTH = 32


def redact(value: Any, schema: JsonSchema | None) -> Any:
    """`value` with every part the JSON Schema marks secret replaced by `"***"`; the input is not modified.

    A schema that marks nothing secret gets `value` itself back (and one that marks anything, for a dict, a
    new dict): a caller may ask once which a schema is."""
    if not schema:
        return value
    cached = _SECRET_FREE.get(id(schema))  # `_has_secrets`, inlined for the usual schema, already seen
    if cached is not None and cached[0] is schema:
        if not cached[1]:
            return value
    elif not _has_secrets(schema):
        return value
    return _redact(value, schema, schema, 0)


_SECRET_FREE: dict[int, tuple[JsonSchema, bool]] = {}


def _has_secrets(schema: JsonSchema) -> bool:
    """Whether the schema marks anything secret; remembered per schema object (specs are immutable)."""
    cached = _SECRET_FREE.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    found = _marks_secret(schema)
    if len(_SECRET_FREE) > 10_000:
        _SECRET_FREE.clear()
    _SECRET_FREE[id(schema)] = (schema, found)
    return found


def _marks_secret(node: Any) -> bool:
    if isinstance(node, dict):
        if node.get("format") == "password" or node.get("x-secret") is True:  # pyright: ignore[reportUnknownMemberType]
            return True
        return any(_marks_secret(v) for v in node.values())  # pyright: ignore[reportUnknownVariableType]
    if isinstance(node, list):
        return any(_marks_secret(v) for v in node)  # pyright: ignore[reportUnknownVariableType]
    return False


def _redact(value: Any, schema: Any, root: JsonSchema, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH or value is None:
        return value
    node: dict[str, Any] = _resolve(schema, root)  # pyright: ignore[reportUnknownArgumentType]
    if node.get("format") == "password" or node.get("x-secret") is True:
        return REDACTED
    for combinator in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(combinator, ()):
            value = _redact(value, branch, root, depth + 1)
    if isinstance(value, dict):
        properties: dict[str, Any] = node.get("properties", {})
        additional = node.get("additionalProperties")
        out: dict[str, Any] = {}
        for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
            out[key] = _redact(item, properties.get(key, additional), root, depth + 1)  # pyright: ignore[reportUnknownArgumentType]
        return out
    if isinstance(value, list):
        prefix: list[Any] = node.get("prefixItems", [])
        items = node.get("items")
        return [
            _redact(item, prefix[i] if i < len(prefix) else items, root, depth + 1)
            for i, item in enumerate(value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        ]
    return value


def _resolve(node: dict[str, Any], root: JsonSchema) -> dict[str, Any]:
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return target if isinstance(target, dict) else node  # pyright: ignore[reportUnknownVariableType]
