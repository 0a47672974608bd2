"""MCP results as tether sees them, and tether envelopes and specs as MCP clients see them."""

from __future__ import annotations

import json
import re
from typing import Any, cast

import mcp_types as types
import pydantic_core

from tether.exceptions import ToolError
from tether.tools import from_mcp, model_schema
from tether.types import ErrorEnvelope, NeedsEnvelope, OkEnvelope, ToolSpec

__all__ = ["GET_PROMPT", "READ_RESOURCE", "call_result", "data_of", "mcp_tool", "published_name", "spec_of"]

_MCP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def spec_of(tool: types.Tool) -> ToolSpec:
    """A listed MCP tool as a ToolSpec: annotations become side effects, the output schema is kept."""
    return from_mcp(tool.model_dump(mode="json", by_alias=True, exclude_none=True))


def data_of(result: types.CallToolResult, tool: str) -> Any:
    """What the model gets for a tool result: structured content when the server gave it, else the content.

    Raises:
        ToolError: the server reported the call failed (`isError`); its text is the message.
    """
    if result.is_error:
        text = _text(result.content) or f"{tool} failed and its server gave no reason"
        raise ToolError(
            "TOOL_ERROR",
            text,
            recoverable=True,
            suggestion="Read the message; fix the arguments and call again, or try another way.",
        )
    if result.structured_content is not None:
        return result.structured_content
    blocks = result.content
    if all(isinstance(b, types.TextContent) for b in blocks):
        return _text(blocks)
    return [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in blocks]


def _text(blocks: list[types.ContentBlock]) -> str:
    return "\n".join(b.text for b in blocks if isinstance(b, types.TextContent))


def published_name(name: str, alias: str) -> str:
    """The name MCP clients see: the tool's own when MCP allows it, else its provider-safe alias."""
    return name if _MCP_NAME.fullmatch(name) else alias


def mcp_tool(spec: ToolSpec, name: str) -> types.Tool:
    """A tether tool as an MCP listing entry: side effects become annotations, object outputs a schema."""
    read_only = spec.side_effects == "none"
    annotations = types.ToolAnnotations(
        read_only_hint=read_only,
        idempotent_hint=spec.side_effects != "mutating",
        destructive_hint=None if read_only else spec.side_effects == "mutating",
    )
    output = spec.output_schema if spec.output_schema and spec.output_schema.get("type") == "object" else None
    return types.Tool(
        name=name,
        description=spec.description,
        input_schema=model_schema(spec),
        output_schema=output,
        annotations=annotations,
    )


def call_result(envelope: OkEnvelope | NeedsEnvelope | ErrorEnvelope) -> types.CallToolResult:
    """An envelope as an MCP tool result: data as content (and structured content when it is an object);
    a refusal as `isError` whose structured content is the whole envelope, so the caller keeps its code,
    `recoverable` and suggestion."""
    if isinstance(envelope, OkEnvelope):
        data: Any = pydantic_core.to_jsonable_python(envelope.data, fallback=repr)
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        structured = cast("dict[str, Any]", data) if isinstance(data, dict) else None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=structured
        )
    envelope_json: dict[str, Any] = envelope.model_dump(mode="json", exclude_none=True)
    if isinstance(envelope, ErrorEnvelope):
        error = envelope.error
        text = f"{error.code}: {error.message}" + (f" {error.suggestion}" if error.suggestion else "")
    else:
        text = f"Needs input: {', '.join(envelope.needs)}. Ask the user for it."
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=envelope_json, is_error=True
    )


READ_RESOURCE = ToolSpec(
    name="read_resource",
    description="Read one of the MCP server's resources by its URI.",
    input_schema={
        "type": "object",
        "properties": {"uri": {"type": "string", "description": "The resource's URI."}},
        "required": ["uri"],
    },
    side_effects="none",
)
"""The tool a mounted server that lists resources gets (read-only)."""

GET_PROMPT = ToolSpec(
    name="get_prompt",
    description="Get one of the MCP server's prompts (messages to follow), filled with its arguments.",
    input_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The prompt's name."},
            "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["name"],
    },
    side_effects="none",
)
"""The tool a mounted server that lists prompts gets (read-only)."""
