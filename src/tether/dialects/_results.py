"""What a model reads of a tool result: one renderer for every dialect's feedback and every provider's tool
message, so a result reads the same whichever way it reaches the model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether.types import ErrorEnvelope, NeedsEnvelope, OkEnvelope, ToolResultMessage

__all__ = ["result_data", "result_text", "tool_responses"]

_Envelope = OkEnvelope | NeedsEnvelope | ErrorEnvelope


def result_text(envelope: _Envelope) -> str:
    """The envelope as the compact JSON a model reads: the envelope's unset optional fields (a null
    `suggestion` or `details`, an ok's null `data`) are left out, nulls inside the tool's data are kept."""
    return envelope.model_dump_json(exclude_none=True)


def result_data(envelope: _Envelope) -> dict[str, Any]:
    """The same as `result_text`, as a JSON value, for formats that embed it in their own (YAML, Gemini's
    `functionResponse`)."""
    return envelope.model_dump(mode="json", exclude_none=True)


def tool_responses(results: Sequence[ToolResultMessage]) -> str:
    """Each result in `<tool_response>` tags, one per line group (Hermes, Qwen, GLM and their relatives)."""
    return "\n".join(f"<tool_response>\n{result_text(r.envelope)}\n</tool_response>" for r in results)
