"""Versioned JSON Schemas of tether's wire formats, generated from the models in `tether.types` only.

`tether schema export DIR` writes one file per entry of `SCHEMAS`, e.g. `tool_call.v1.json`. A format's
version changes only when a change to it would break a reader; the files committed under `schemas/` are
checked against the models by the test suite, so they cannot drift. TypeScript types generated from them
(json-schema-to-typescript, pinned by `schemas/typescript/package-lock.json`) are committed beside them in
`schemas/typescript/` and checked the same way (seed 004).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from tether import types

__all__ = ["SCHEMAS", "export_schemas", "schema_for"]

SCHEMA_BASE_URL = "https://tether.dev/schemas/"

SCHEMAS: dict[str, Any] = {
    "tool_spec.v1": types.ToolSpec,
    "tool_call.v1": types.ToolCall,
    "envelope.v1": types.Envelope,
    "chat_message.v1": types.Message,
    "chat_message.v2": types.ChatMessageV2,
    "agent_streaming_events.v1": types.Event,
    "tool_call_record.v1": types.ToolCallRecord,
    "meowstik_tool_calls.v1": types.MeowstikToolCalls,
    "agent_config.v2": types.AgentConfig,
    "agent_config.v3": types.AgentConfigV3,
    "text_document_metadata.v1": types.TextDocumentMetadata,
    "qa_metadata.v1": types.QAMetadata,
    "vector_search_output.v1": types.VectorSearchOutput,
}
"""File stem -> the model (or annotated union) it is generated from."""


def schema_for(name: str) -> dict[str, Any]:
    """The JSON Schema document for one entry of `SCHEMAS`."""
    schema = TypeAdapter(SCHEMAS[name]).json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{SCHEMA_BASE_URL}{name}.json",
        **schema,
    }


def export_schemas(directory: Path) -> list[Path]:
    """Write every schema to `directory` (created if missing); returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in SCHEMAS:
        path = directory / f"{name}.json"
        path.write_text(json.dumps(schema_for(name), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written
