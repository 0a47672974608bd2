"""What a dialect needs to know about the tools: names, parameter order and parameter types.

`ToolIndex.of(tools)` accepts what `tether.tools.as_toolset` accepts (Toolsets, tools, ToolSpecs, functions,
tool JSON in every format tether reads, or lists of them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, cast

from tether._literals import parse_value
from tether._syntax import SyntaxCall
from tether.tools import as_toolset
from tether.types import Repair, ToolSpec

__all__ = ["ToolIndex", "bind_arguments", "coerce_text_value"]


class ToolIndex:
    """Tool specs by name, for the questions a parser asks."""

    __slots__ = ("specs",)

    def __init__(self, specs: Iterable[ToolSpec] = ()):
        self.specs: dict[str, ToolSpec] = {s.name: s for s in specs}

    @classmethod
    def of(cls, tools: Any) -> ToolIndex:
        """Index `tools`: None, a ToolIndex, ToolSpecs, tool dicts, a Toolset, or a list of those."""
        if tools is None:
            return cls()
        if isinstance(tools, ToolIndex):
            return tools
        return cls(as_toolset(tools).specs())

    def __bool__(self) -> bool:
        return bool(self.specs)

    def get(self, name: str) -> ToolSpec | None:
        return self.specs.get(name)

    def parameters(self, name: str) -> list[str]:
        """Parameter names of tool `name` in declaration order (empty if unknown)."""
        spec = self.specs.get(name)
        if spec is None:
            return []
        props = spec.input_schema.get("properties")
        return list(cast("dict[str, Any]", props)) if isinstance(props, dict) else []

    def param_schema(self, name: str, param: str) -> dict[str, Any] | None:
        spec = self.specs.get(name)
        if spec is None:
            return None
        props = spec.input_schema.get("properties")
        if not isinstance(props, dict):
            return None
        schema = cast("dict[str, Any]", props).get(param)
        return cast("dict[str, Any]", schema) if isinstance(schema, dict) else None


def _types_of(schema: dict[str, Any] | None) -> list[str]:
    if not schema:
        return []
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in cast("list[Any]", t) if isinstance(x, str)]
    types: list[str] = []
    for key in ("anyOf", "oneOf"):
        for sub in cast("list[Any]", schema.get(key) or []):
            if isinstance(sub, dict):
                types.extend(_types_of(cast("dict[str, Any]", sub)))
    return types


def coerce_text_value(
    raw: str, schema: dict[str, Any] | None, path: str, *, default_json: bool = True
) -> tuple[Any, Repair | None]:
    """Turn a parameter value that a format carries as text (XML-like dialects) into a typed value.

    With a schema, its type decides: `string` keeps the text, `integer`/`number`/`boolean`/`object`/`array`
    parse it (recording a `coerced` repair); text that does not parse stays a string for validation to
    report. Without a schema, text that reads as a JSON value becomes that value when `default_json`.
    """
    types = _types_of(schema)
    if "string" in types or (not types and not default_json):
        return raw, None
    text = raw.strip()
    if not types:
        if text[:1] in "{[" or text in ("true", "false", "null") or _is_number(text):
            result = parse_value(text)
            if result.ok and result.end == len(text) and not result.repairs:
                return result.value, None
        return raw, None
    for t in types:
        if t == "integer" and _is_number(text):
            f = float(text)
            if f.is_integer():
                return int(f), Repair(kind="coerced", message=f"read {text!r} as an integer", path=path)
        elif t == "number" and _is_number(text):
            value = json.loads(text) if text.lstrip("-").replace(".", "", 1).isdigit() else float(text)
            return value, Repair(kind="coerced", message=f"read {text!r} as a number", path=path)
        elif t == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true", Repair(
                kind="coerced", message=f"read {text!r} as a boolean", path=path
            )
        elif t == "null" and text.lower() in ("null", "none"):
            return None, Repair(kind="coerced", message=f"read {text!r} as null", path=path)
        elif t in ("object", "array"):
            result = parse_value(text, flavor="python" if "'" in text and '"' not in text else "json")
            value: Any = result.value
            if result.ok and type(value) is (dict if t == "object" else list):
                return cast("Any", value), Repair(
                    kind="coerced", message=f"read the text as an {t}", path=path
                )
    return raw, None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip().lower() not in ("nan", "inf", "-inf", "infinity", "-infinity", "+inf")


def bind_arguments(call: SyntaxCall, tools: ToolIndex) -> tuple[dict[str, Any], list[Repair], str | None]:
    """Map positional arguments to the tool's parameters in declaration order; returns args, repairs, error."""
    repairs: list[Repair] = []
    if not call.args:
        return dict(call.kwargs), repairs, None
    params = tools.parameters(call.name)
    if len(call.args) == 1 and isinstance(call.args[0], dict) and not call.kwargs:
        obj: dict[str, Any] = call.args[0]  # pyright: ignore[reportUnknownVariableType]
        first = tools.param_schema(call.name, params[0]) if params else None
        first_is_object = bool(first) and first.get("type") == "object" and len(params) == 1
        if not params or (not first_is_object and set(obj) <= set(params)):
            return dict(obj), repairs, None  # fn({a: 1}): arguments passed as one object
    if not params:
        return (
            {},
            repairs,
            f"{call.name} has positional arguments but its parameters are unknown (pass tools=)",
        )
    if len(call.args) > len(params):
        return {}, repairs, f"{call.name} takes {len(params)} arguments, {len(call.args)} given"
    out = dict(zip(params, call.args, strict=False))
    for k, v in call.kwargs.items():
        if k in out:
            return {}, repairs, f"{call.name} got {k} both by position and by name"
        out[k] = v
    return out, repairs, None
