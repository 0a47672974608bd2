"""MOOLLM's YAML tool definitions (seed 001 §2, §3 and §7), in and out.

Accepted shapes, in one file or several YAML documents:
`tool: {name, ...}`; a bare `{name, ...}`; a mapping of names to definitions (`fs.ls: {description, ...}`);
`tools: [...]` / `custom_tools: [...]` lists. Types may use MOOLLM's shorthand (`size: int`, `items: string`).
`why` is always required (seed 001 §4) unless a definition says `requires_why: false`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import yaml

from tether.exceptions import UserError
from tether.tools._schema import model_schema, normalize_schema
from tether.types import JsonSchema, SandboxPolicy, ToolExample, ToolSpec

__all__ = ["dump_yaml", "spec_from_moollm", "specs_from_yaml"]

_FIELDS = {"name", "description", "category", "input_schema", "output_schema", "sandbox", "examples", "scopes",
           "side_effects", "requires_why", "priority", "rate_limit", "sequential", "idempotency_fields"}  # fmt: skip


def specs_from_yaml(text: str, *, source: str = "YAML") -> list[ToolSpec]:
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        raise UserError(f"{source}: not valid YAML: {e}") from e
    specs = [spec for doc in documents for spec in _specs_in(doc, source)]
    if not specs:
        raise UserError(
            f"{source}: no tool definitions found (expected `tool:`, `tools:` or `name:` entries)."
        )
    return specs


def _specs_in(doc: Any, source: str) -> Iterable[ToolSpec]:
    if isinstance(doc, list):
        for item in cast("list[Any]", doc):
            yield from _specs_in(item, source)
        return
    if not isinstance(doc, dict):
        raise UserError(f"{source}: expected a mapping of tool definitions, got {type(doc).__name__}.")
    d = cast("dict[str, Any]", doc)
    if isinstance(d.get("tool"), dict):
        yield spec_from_moollm(d["tool"], source=source)
    elif isinstance(d.get("tools"), list) or isinstance(d.get("custom_tools"), list):
        for item in d.get("tools", []) + d.get("custom_tools", []):
            yield spec_from_moollm(item, source=source)
    elif "name" in d:
        yield spec_from_moollm(d, source=source)
    else:  # a mapping of names to definitions, as in seed 001 §3
        for name, definition in d.items():
            if not isinstance(definition, dict):
                raise UserError(f"{source}: tool {name!r} should map to a definition, not {definition!r}.")
            yield spec_from_moollm({"name": name, **cast("dict[str, Any]", definition)}, source=source)


def spec_from_moollm(d: Mapping[str, Any], *, source: str = "MOOLLM tool") -> ToolSpec:
    """One MOOLLM definition (also reads Anthropic's `{name, description, input_schema}`)."""
    name = d.get("name")
    if not isinstance(name, str):
        raise UserError(f"{source}: a tool definition needs a string `name` (have keys {sorted(d)}).")
    where = f"{source}: tool {name!r}"
    schema = normalize_schema(
        d.get("input_schema") or {"type": "object", "properties": {}}, where=f"{where} input_schema"
    )
    schema, why_declared = _without_why(schema)
    fields = {k: v for k, v in d.items() if k in _FIELDS}
    fields["input_schema"] = schema
    fields["requires_why"] = bool(d.get("requires_why", True))
    if d.get("output_schema") is not None:
        fields["output_schema"] = normalize_schema(d["output_schema"], where=f"{where} output_schema")
    fields["metadata"] = {k: v for k, v in d.items() if k not in _FIELDS}
    if why_declared and not fields["requires_why"]:
        raise UserError(f"{where}: `why` is in input_schema but requires_why is false; drop one of them.")
    try:
        if "sandbox" in fields:
            fields["sandbox"] = SandboxPolicy.model_validate(fields["sandbox"])
        if "examples" in fields:
            fields["examples"] = tuple(ToolExample.model_validate(e) for e in fields["examples"])
        return ToolSpec.model_validate(fields)
    except ValueError as e:
        raise UserError(f"{where}: {e}") from e


def _without_why(schema: JsonSchema) -> tuple[JsonSchema, bool]:
    """`why` is tether's to require: keep it out of the tool's own schema."""
    properties: dict[str, Any] = schema.get("properties", {})
    if "why" not in properties:
        return schema, False
    out = dict(schema)
    out["properties"] = {k: v for k, v in properties.items() if k != "why"}
    if "required" in out:
        out["required"] = [r for r in out["required"] if r != "why"]
    return out, True


def dump_yaml(specs: Iterable[ToolSpec]) -> str:
    """MOOLLM YAML, one `tool:` document per tool; `specs_from_yaml` reads it back to equal specs."""
    documents: list[dict[str, Any]] = []
    for spec in specs:
        data = spec.model_dump(mode="json", exclude_defaults=True, exclude={"metadata"})
        data["name"] = spec.name
        data["input_schema"] = model_schema(spec)
        data["requires_why"] = spec.requires_why
        documents.append({"tool": {**data, **spec.metadata}})
    return yaml.safe_dump_all(documents, sort_keys=False, allow_unicode=True)
