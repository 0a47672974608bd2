"""Tool JSON of providers and protocols, in and out: OpenAI, Anthropic, Gemini, MCP and BFCL.

`spec_from_dict` recognises the format by its shape, so a list mixing formats loads too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from pydantic import ValidationError

from tether.exceptions import UserError
from tether.tools._schema import gemini_schema, model_schema, normalize_schema, strict_schema
from tether.tools._toolset import AbstractToolset
from tether.tools._yaml import spec_from_moollm
from tether.types import JsonSchema, SideEffects, ToolSpec

__all__ = [
    "ExportFormat",
    "export_tools",
    "from_anthropic",
    "from_bfcl",
    "from_gemini",
    "from_mcp",
    "from_openai",
    "spec_from_dict",
    "specs_from_json",
    "to_anthropic",
    "to_gemini",
    "to_openai",
]

ExportFormat = Literal["openai", "anthropic", "gemini"]

_MOOLLM_KEYS = frozenset({"category", "sandbox", "examples", "output_schema", "requires_why", "mcp_server"})


def _spec(where: str, **fields: Any) -> ToolSpec:
    try:
        return ToolSpec(**{k: v for k, v in fields.items() if v is not None})
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
        raise UserError(f"{where}: not a valid tool definition: {problems}") from e


def _require(d: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise UserError(f"{where}: missing {key!r} (have {sorted(d)}).")
    return d[key]


def _parameters(schema: Any, where: str) -> JsonSchema:
    if schema is None:
        return {"type": "object", "properties": {}}
    normalized = normalize_schema(schema, where=f"{where} parameters")
    normalized.setdefault("type", "object")  # `{}` and bare `{"properties": ...}` are common in the wild
    if normalized.get("type") != "object":
        raise UserError(
            f"{where}: the parameters schema must describe an object, got {normalized.get('type')!r}."
        )
    if "properties" not in normalized:  # `{}` or `{"type": "object"}`: any object, so any names
        normalized["properties"] = {}
        normalized.setdefault("additionalProperties", True)
    return normalized


# ---------------------------------------------------------------------------------------------- import


def from_openai(d: Mapping[str, Any]) -> ToolSpec:
    """OpenAI Chat Completions `{"type": "function", "function": {...}}` or Responses `{"type": "function", "name"}`."""
    fn: Mapping[str, Any] = d["function"] if isinstance(d.get("function"), dict) else d
    name = _require(fn, "name", "OpenAI tool")
    where = f"OpenAI tool {name!r}"
    metadata = {"strict": fn["strict"]} if "strict" in fn else None
    return _spec(where, name=name, description=fn.get("description", ""),
                 input_schema=_parameters(fn.get("parameters"), where), metadata=metadata)  # fmt: skip


def from_anthropic(d: Mapping[str, Any]) -> ToolSpec:
    """Anthropic `{"name", "description", "input_schema"}`."""
    name = _require(d, "name", "Anthropic tool")
    where = f"Anthropic tool {name!r}"
    return _spec(where, name=name, description=d.get("description", ""),
                 input_schema=_parameters(_require(d, "input_schema", where), where))  # fmt: skip


def from_gemini(d: Mapping[str, Any]) -> ToolSpec:
    """A Gemini function declaration: `parameters` (OpenAPI subset) or `parametersJsonSchema`."""
    name = _require(d, "name", "Gemini function declaration")
    where = f"Gemini function {name!r}"
    schema = d.get("parametersJsonSchema", d.get("parameters_json_schema", d.get("parameters")))
    return _spec(
        where, name=name, description=d.get("description", ""), input_schema=_parameters(schema, where)
    )


def from_mcp(d: Mapping[str, Any]) -> ToolSpec:
    """An MCP tool listing entry: `{"name", "description", "inputSchema", "outputSchema", "annotations"}`."""
    name = _require(d, "name", "MCP tool")
    where = f"MCP tool {name!r}"
    hints: Mapping[str, Any] = d.get("annotations") or {}
    side_effects: SideEffects = "mutating"  # MCP's defaults: not read-only, destructive, not idempotent
    if hints.get("readOnlyHint") is True:
        side_effects = "none"
    elif hints.get("idempotentHint") is True:
        side_effects = "idempotent"
    output = d.get("outputSchema")
    metadata = {k: d[k] for k in ("title", "annotations") if k in d} or None
    return _spec(where, name=name, description=d.get("description", ""),
                 input_schema=_parameters(d.get("inputSchema"), where),
                 output_schema=normalize_schema(output, where=f"{where} outputSchema") if output else None,
                 side_effects=side_effects, metadata=metadata)  # fmt: skip


def from_bfcl(d: Mapping[str, Any]) -> ToolSpec:
    """A BFCL function doc: `dict`, `float`, `tuple`, `any` and Java/JS type names become JSON Schema."""
    name = _require(d, "name", "BFCL function")
    where = f"BFCL function {name!r}"
    output = d.get("response")
    return _spec(where, name=name, description=d.get("description", ""),
                 input_schema=_parameters(d.get("parameters"), where),
                 output_schema=normalize_schema(output, where=f"{where} response") if output else None)  # fmt: skip


def spec_from_dict(d: Mapping[str, Any]) -> ToolSpec:
    """A ToolSpec from tool JSON in any format tether reads, recognised by its shape."""
    if not isinstance(d, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance] - JSON from users
        raise UserError(f"A tool definition must be a JSON object, not {type(d).__name__}.")
    if d.get("type") == "function":
        return from_openai(d)
    if "inputSchema" in d:
        return from_mcp(d)
    if "input_schema" in d:
        schema: Any = d["input_schema"]
        declares_why = isinstance(schema, dict) and "why" in cast("dict[str, Any]", schema).get(
            "properties", {}
        )
        moollm = bool(_MOOLLM_KEYS & set(d)) or declares_why
        return spec_from_moollm(d) if moollm else from_anthropic(d)
    if "parametersJsonSchema" in d or "parameters_json_schema" in d:
        return from_gemini(d)
    if "name" in d and ("parameters" in d or "description" in d):
        return from_bfcl(d)  # BFCL's normalisation also covers Gemini's and plain JSON Schema types
    raise UserError(
        f"Unrecognised tool definition with keys {sorted(d)}: expected OpenAI ({{type: function, function}}), "
        "Anthropic/MOOLLM (input_schema), Gemini (parameters), MCP (inputSchema) or BFCL (parameters)."
    )


def specs_from_json(data: Any) -> list[ToolSpec]:
    """Every tool in parsed JSON: one definition, a list, `{"tools": [...]}` (MCP, OpenAI requests) or
    `{"functionDeclarations": [...]}` (Gemini)."""
    if isinstance(data, list):
        return [spec for item in cast("list[Any]", data) for spec in specs_from_json(item)]
    if isinstance(data, dict):
        obj = cast("dict[str, Any]", data)
        for key in ("tools", "functionDeclarations", "function_declarations"):
            if isinstance(obj.get(key), list) and "name" not in obj:
                return specs_from_json(obj[key])
        return [spec_from_dict(obj)]
    raise UserError(f"Expected tool JSON (an object or a list of objects), got {type(data).__name__}.")


# ---------------------------------------------------------------------------------------------- export


def to_openai(spec: ToolSpec, *, name: str | None = None, strict: bool = False) -> dict[str, Any]:
    """OpenAI Chat Completions tool JSON; `name` is the provider-safe alias (see `Toolset.alias_of`)."""
    schema = model_schema(spec)
    function: dict[str, Any] = {"name": name or spec.name, "description": spec.description,
                                "parameters": strict_schema(schema) if strict else schema}  # fmt: skip
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def to_anthropic(spec: ToolSpec, *, name: str | None = None) -> dict[str, Any]:
    return {"name": name or spec.name, "description": spec.description, "input_schema": model_schema(spec)}


def to_gemini(spec: ToolSpec, *, name: str | None = None) -> dict[str, Any]:
    """A Gemini function declaration (Gemini allows dots in names, so none are aliased by default)."""
    return {
        "name": name or spec.name,
        "description": spec.description,
        "parameters": gemini_schema(model_schema(spec)),
    }


def export_tools(
    toolset: AbstractToolset, fmt: ExportFormat, *, strict: bool = False
) -> list[dict[str, Any]]:
    """A whole toolset as one provider's tool list, with reversible aliases where the provider forbids a name."""
    match fmt:
        case "openai":
            return [to_openai(s, name=toolset.alias_of(s.name), strict=strict) for s in toolset.specs()]
        case "anthropic":
            return [to_anthropic(s, name=toolset.alias_of(s.name)) for s in toolset.specs()]
        case "gemini":
            return [to_gemini(s) for s in toolset.specs()]
