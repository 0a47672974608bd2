"""JSON Schema in and out: normalise the type vocabularies of other sources, shape schemas for providers.

In: BFCL's `dict`/`float`/`tuple`/`any` and Java/JS names, Gemini's `STRING`/`OBJECT` and `nullable`,
MOOLLM's shorthand (`name: string`, `size: int`, `"file" | "directory"`) all become JSON Schema 2020-12.
Out: the schema a model sees (with `why` when the tool requires it), OpenAI strict mode, Gemini's subset.
"""

from __future__ import annotations

import copy
from typing import Any, cast

from tether.exceptions import UserError
from tether.types import JsonSchema, ToolSpec

__all__ = ["WHY_DESCRIPTION", "gemini_schema", "model_schema", "normalize_schema", "strict_schema"]

WHY_DESCRIPTION = "One sentence: what you are trying to accomplish with this call."

# BFCL, Java, JavaScript, Gemini and MOOLLM type names -> JSON Schema types (None: any value).
_TYPE_NAMES: dict[str, str | None] = {
    "string": "string", "str": "string", "String": "string", "char": "string", "Character": "string",
    "integer": "integer", "int": "integer", "Integer": "integer", "long": "integer", "Long": "integer",
    "short": "integer", "byte": "integer", "Bigint": "integer", "BigInteger": "integer",
    "number": "number", "float": "number", "Float": "number", "double": "number", "Double": "number",
    "boolean": "boolean", "bool": "boolean", "Boolean": "boolean",
    "object": "object", "dict": "object", "Dict": "object", "HashMap": "object", "Map": "object",
    "Hashtable": "object", "Object": "object",
    "array": "array", "list": "array", "List": "array", "tuple": "array", "Array": "array",
    "ArrayList": "array", "Set": "array", "Queue": "array", "Stack": "array",
    "null": "null", "None": "null",
    "any": None, "Any": None, "": None,
}  # fmt: skip
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames")


def normalize_schema(schema: Any, *, where: str = "schema") -> JsonSchema:
    """Any of the type vocabularies tether reads, as JSON Schema; raises `UserError` on what it cannot map."""
    return cast("JsonSchema", _normalize(copy.deepcopy(schema), where))


def _normalize(node: Any, where: str) -> Any:
    if isinstance(node, str):
        return _shorthand(node, where)
    if not isinstance(node, dict):
        raise UserError(f"{where}: expected a schema object, got {type(node).__name__} {node!r}.")
    schema = cast("dict[str, Any]", node)
    kind = schema.get("type")
    if isinstance(kind, str):
        if kind.lower() in _TYPE_NAMES and kind not in _TYPE_NAMES:
            kind = kind.lower()  # Gemini's STRING, OBJECT, ...
        if kind not in _TYPE_NAMES:
            raise UserError(
                f"{where}: unknown type {kind!r}; use a JSON Schema type such as 'string' or 'object'."
            )
        mapped = _TYPE_NAMES[kind]
        if mapped is None:
            del schema["type"]
        else:
            schema["type"] = mapped
    elif isinstance(kind, list):
        schema["type"] = [_TYPE_NAMES.get(str(k)) or str(k) for k in cast("list[Any]", kind)]
    if schema.pop("nullable", False) is True and isinstance(schema.get("type"), str):
        schema["type"] = [schema["type"], "null"]
    for key in _SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            schema[key] = {k: _normalize(v, f"{where}.{k}") for k, v in schema[key].items()}
    for key in _SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            schema[key] = [_normalize(v, f"{where}.{key}[{i}]") for i, v in enumerate(schema[key])]
    for key in _SCHEMA_VALUES:
        if isinstance(schema.get(key), dict | str):
            schema[key] = _normalize(schema[key], f"{where}.{key}")
    if isinstance(schema.get("required"), bool):
        del schema["required"]  # an OpenAPI 2 habit (`required: true` on a property); the parent lists them
    if "properties" in schema and "type" not in schema:
        schema["type"] = "object"
    return schema


def _shorthand(text: str, where: str) -> JsonSchema:
    """MOOLLM's shorthand: `string`, `int`, `array`, `"file" | "directory"`."""
    text = text.strip()
    if text.endswith("[]"):
        return {"type": "array", "items": _shorthand(text[:-2], where)}
    if "|" in text:
        options = [o.strip().strip("\"'") for o in text.split("|")]
        return {"enum": options}
    if text not in _TYPE_NAMES:
        raise UserError(f"{where}: {text!r} is neither a schema nor a known type name.")
    mapped = _TYPE_NAMES[text]
    return {"type": mapped} if mapped else {}


def model_schema(spec: ToolSpec) -> JsonSchema:
    """The input schema a model is shown: the tool's own, plus a required `why` when the tool asks for one."""
    if not spec.requires_why or "why" in spec.input_schema.get("properties", {}):
        return spec.input_schema
    schema = dict(spec.input_schema)
    schema["properties"] = {
        **schema.get("properties", {}),
        "why": {"type": "string", "description": WHY_DESCRIPTION},
    }
    schema["required"] = [*schema.get("required", []), "why"]
    return schema


def strict_schema(schema: JsonSchema) -> JsonSchema:
    """OpenAI strict mode: every object closed, every property required, optional ones nullable."""
    return cast("JsonSchema", _strict(_inline_refs(schema)))


def _strict(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in cast("dict[str, Any]", node).items() if k not in ("default", "$schema", "title")}
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_strict(v) for v in out[key]]
    if isinstance(out.get("items"), dict):
        out["items"] = _strict(out["items"])
    if out.get("type") == "object" or "properties" in out:
        properties: dict[str, Any] = out.get("properties", {})
        required = set(out.get("required", []))
        out["properties"] = {
            name: _strict(sub) if name in required else _nullable(_strict(sub))
            for name, sub in properties.items()
        }
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def _nullable(schema: JsonSchema) -> JsonSchema:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list) and "null" in kind:
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def gemini_schema(schema: JsonSchema) -> JsonSchema:
    """Gemini's OpenAPI subset: refs inlined, upper-case types, `nullable`, no `additionalProperties`."""
    return cast("JsonSchema", _gemini(_inline_refs(schema)))


_GEMINI_KEYS = frozenset(
    {"type", "format", "description", "nullable", "enum", "maxItems", "minItems", "properties", "required",
     "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "anyOf", "items", "minimum",
     "maximum", "default", "title"}
)  # fmt: skip


def _gemini(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    src = cast("dict[str, Any]", node)
    out: dict[str, Any] = {}
    if "const" in src:
        out["enum"] = [src["const"]]
    kind = src.get("type")
    if isinstance(kind, list):
        kinds = [k for k in cast("list[str]", kind) if k != "null"]
        if len(kinds) < len(cast("list[str]", kind)):
            out["nullable"] = True
        kind = kinds[0] if len(kinds) == 1 else None
        if kind is None and kinds:
            out["anyOf"] = [{"type": k.upper()} for k in kinds]
    any_of = src.get("anyOf")
    if isinstance(any_of, list):
        options = [o for o in cast("list[Any]", any_of) if o != {"type": "null"}]
        if len(options) < len(cast("list[Any]", any_of)):
            out["nullable"] = True
        if len(options) == 1:
            return {
                **_gemini(options[0]),
                **out,
                **({"description": src["description"]} if "description" in src else {}),
            }
        out["anyOf"] = [_gemini(o) for o in options]
    for key, value in src.items():
        if key in ("type", "anyOf") or key not in _GEMINI_KEYS:
            continue
        if key == "properties":
            out[key] = {name: _gemini(sub) for name, sub in cast("dict[str, Any]", value).items()}
        elif key == "items":
            out[key] = _gemini(value)
        else:
            out[key] = value
    if isinstance(kind, str):
        out["type"] = kind.upper()
    elif "enum" in out and "anyOf" not in out and all(isinstance(v, str) for v in out["enum"]):
        out["type"] = "STRING"  # Gemini wants a type beside every enum
    return out


def _inline_refs(schema: JsonSchema) -> JsonSchema:
    """Replace local `$ref`s (`#/$defs/X`) by their targets, for providers that do not follow refs."""
    defs: dict[str, Any] = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(v, seen) for v in cast("list[Any]", node)]
        if not isinstance(node, dict):
            return node
        obj = cast("dict[str, Any]", node)
        ref = obj.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            name = ref.rsplit("/", 1)[1]
            if name in seen:
                raise UserError(f"Schema reference {ref} is recursive; this provider cannot express it.")
            target = {**defs.get(name, {}), **{k: v for k, v in obj.items() if k != "$ref"}}
            return resolve(target, (*seen, name))
        return {k: resolve(v, seen) for k, v in obj.items() if k not in ("$defs", "definitions")}

    return cast("JsonSchema", resolve(schema, ()))
