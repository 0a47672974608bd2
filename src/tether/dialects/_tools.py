"""What a dialect needs to know about the tools: names, parameter order and parameter types.

`ToolIndex.of(tools)` accepts what `tether.tools.as_toolset` accepts; plain `ToolSpec`s and tool dicts in
the common formats (OpenAI, Anthropic, Gemini, MCP, BFCL) are read here directly so that a dialect works
without the tools package.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, cast

from pydantic import ValidationError

from tether.dialects._json import parse_value
from tether.types import Repair, ToolSpec

__all__ = ["ToolIndex", "coerce_text_value", "spec_from_dict"]

_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "int": "integer", "bool": "boolean"}


def _normalise_schema(schema: Any) -> Any:
    if isinstance(schema, dict):
        out: dict[str, Any] = {}
        for k, v in cast(dict[str, Any], schema).items():
            if k == "type" and isinstance(v, str):
                out[k] = _BFCL_TYPES.get(v, v)
            elif k == "type" and isinstance(v, list):
                out[k] = [_BFCL_TYPES.get(t, t) if isinstance(t, str) else t for t in cast(list[Any], v)]
            else:
                out[k] = _normalise_schema(v)
        return out
    if isinstance(schema, list):
        return [_normalise_schema(x) for x in cast(list[Any], schema)]
    return schema


def spec_from_dict(d: Mapping[str, Any]) -> ToolSpec | None:
    """A ToolSpec from an OpenAI, Anthropic, Gemini, MCP or BFCL tool dict; `None` if it is none of them."""
    if d.get("type") == "function" and isinstance(d.get("function"), dict):
        d = cast(dict[str, Any], d["function"])
    name = d.get("name")
    if not isinstance(name, str):
        return None
    raw: Any = (
        d.get("parameters") or d.get("input_schema") or d.get("inputSchema") or d.get("parametersJsonSchema")
    )
    schema: dict[str, Any] = (
        _normalise_schema(raw) if isinstance(raw, dict) else {"type": "object", "properties": {}}
    )
    try:
        return ToolSpec(name=name, description=str(d.get("description") or ""), input_schema=schema)
    except ValidationError:
        return None


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
        if isinstance(tools, ToolSpec):
            return cls([tools])
        if isinstance(tools, Mapping):
            mapping = cast(Mapping[str, Any], tools)
            if "functionDeclarations" in mapping or "function_declarations" in mapping:
                return cls.of(mapping.get("functionDeclarations") or mapping.get("function_declarations"))
            spec = spec_from_dict(mapping)
            return cls([spec] if spec else [])
        if isinstance(tools, list | tuple):
            specs: list[ToolSpec] = []
            for item in cast(Iterable[Any], tools):
                specs.extend(cls.of(item).specs.values())
            return cls(specs)
        return cls(_specs_from_toolset(tools))

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
        return list(cast(dict[str, Any], props)) if isinstance(props, dict) else []

    def param_schema(self, name: str, param: str) -> dict[str, Any] | None:
        spec = self.specs.get(name)
        if spec is None:
            return None
        props = spec.input_schema.get("properties")
        if not isinstance(props, dict):
            return None
        schema = cast(dict[str, Any], props).get(param)
        return cast(dict[str, Any], schema) if isinstance(schema, dict) else None


def _specs_from_toolset(tools: Any) -> list[ToolSpec]:
    """Use `tether.tools.as_toolset` for anything else (functions, Tools, Toolsets)."""
    tools_module = importlib.import_module("tether.tools")  # the tools package imports dialects' peers
    toolset: Any = tools_module.as_toolset(tools)
    if hasattr(toolset, "specs"):
        return list(toolset.specs())
    return [t.spec for t in toolset.tools().values()]


def _types_of(schema: dict[str, Any] | None) -> list[str]:
    if not schema:
        return []
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in cast(list[Any], t) if isinstance(x, str)]
    types: list[str] = []
    for key in ("anyOf", "oneOf"):
        for sub in cast(list[Any], schema.get(key) or []):
            if isinstance(sub, dict):
                types.extend(_types_of(cast(dict[str, Any], sub)))
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
                return cast(Any, value), Repair(kind="coerced", message=f"read the text as an {t}", path=path)
    return raw, None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip().lower() not in ("nan", "inf", "-inf", "infinity", "-infinity", "+inf")
