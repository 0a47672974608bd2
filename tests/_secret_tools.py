"""What the secrets tests share (docs/sessions.md, "Where a secret may go"): the values they hide, the
schema pieces that mark a value secret, `marked` (a tool whose schemas mark them) and the text of a call a
scripted model makes. Each test file keeps its own tool, whose behaviour (echoing a value, failing with
it, asking for it) is the attack it makes."""

from __future__ import annotations

import json
from typing import Any

from tether.tools import Tool
from tether.types import JsonSchema

__all__ = [
    "API_KEY",
    "PASSWORD",
    "PASSWORD_FIELD",
    "RECOVERY",
    "SECRET_NUMBER",
    "SECRET_TEXT",
    "TOKEN",
    "hermes",
    "marked",
    "marked_login",
]

PASSWORD = "Zq9Kx7-correct-horse"
API_KEY = "sk-live-Hq2Rt8Pw0Lm"
RECOVERY = ["rec-Aa11Bb22Cc33", "rec-Dd44Ee55Ff66"]
TOKEN = "TOK-5f1e9c07d2b84a"

PASSWORD_FIELD: JsonSchema = {"type": "string", "format": "password"}
"""A string marked secret by its format."""
SECRET_TEXT: JsonSchema = {"type": "string", "x-secret": True}
SECRET_NUMBER: JsonSchema = {"type": "integer", "x-secret": True}


def marked(
    tool: Tool[..., Any],
    *,
    inputs: dict[str, JsonSchema] | None = None,
    outputs: dict[str, JsonSchema] | None = None,
    defs: dict[str, JsonSchema] | None = None,
) -> Tool[..., Any]:
    """`tool` with these `inputs` in place of its input schema's properties of the same names (the others,
    and `required`, as `@tool` made them from its signature; `defs` for a `$ref` to point to), and, with
    `outputs`, an output schema of an object with these properties."""
    schema = dict(tool.spec.input_schema)
    schema["properties"] = {**schema.get("properties", {}), **(inputs or {})}
    if defs is not None:
        schema["$defs"] = defs
    update: dict[str, Any] = {"input_schema": schema}
    if outputs is not None:
        update["output_schema"] = {"type": "object", "properties": outputs}
    return tool.with_spec(tool.spec.model_copy(update=update))


def marked_login(tool: Tool[..., Any], **more: JsonSchema) -> Tool[..., Any]:
    """`tool`, a login taking `password: str, profile: dict, codes: list[str]` (and returning a `token`),
    with them marked secret at every depth: `password` by its format, `profile`'s `api_key` through a
    `$ref`, `codes` in an array's items, the result's `token`; and the inputs `more` too."""
    profile = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "api_key": {"$ref": "#/$defs/key"}},
    }
    codes = {"type": "array", "items": SECRET_TEXT}
    inputs = {"password": PASSWORD_FIELD, "profile": profile, "codes": codes, **more}
    return marked(tool, inputs=inputs, defs={"key": SECRET_TEXT}, outputs={"token": PASSWORD_FIELD})


def hermes(name: str, /, **arguments: Any) -> str:
    """A call as a model writes it in the hermes dialect."""
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"
