"""What a model reads of a tool result: one renderer for every dialect's feedback and every provider's tool
message, so a result reads the same whichever way it reaches the model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_core import SchemaSerializer
from pydantic_core import to_json as _to_json

from tether.types import AnyEnvelope, OkEnvelope, ToolResultMessage

__all__ = ["result_text", "result_value", "tool_responses"]

_SERIALIZERS: dict[type[Any], SchemaSerializer] = {}
"""Each envelope type's serializer, once its class is built (the types defer building until first used)."""


def result_text(envelope: AnyEnvelope) -> str:
    """The envelope as the compact JSON a model reads: the envelope's unset optional fields (a null
    `suggestion` or `details`, an ok's null `data`) are left out, nulls inside the tool's data are kept."""
    if type(envelope) is OkEnvelope:
        # The usual result: `{"ok":true,"data":...}`, its data serialized alone as the envelope's serializer
        # serializes its `Any` field (the same exclusions, non-finite floats as `null`, pydantic's default), in a
        # third of the envelope serializer's time (~0.5 µs a result); `{"ok":true}` for none (excluded).
        # `tests/dialects/test_results.py` checks the text against `model_dump_json` byte for byte.
        data = envelope.data
        if data is None:
            return '{"ok":true}'
        return '{"ok":true,"data":' + _to_json(data, exclude_none=True, inf_nan_mode="null").decode() + "}"
    # `model_dump_json(exclude_none=True)`, less its wrapper (fifteen keywords passed on, ~0.7 µs a result):
    # the text is the serializer's either way (`tests/dialects/test_results.py`)
    serializer = _SERIALIZERS.get(type(envelope))
    if serializer is None:
        text = envelope.model_dump_json(exclude_none=True)  # builds a deferred class's serializer first
        _SERIALIZERS[type(envelope)] = type(envelope).__pydantic_serializer__
        return text
    return serializer.to_json(envelope, exclude_none=True).decode()


def result_value(envelope: AnyEnvelope) -> dict[str, Any]:
    """The same as `result_text`, as a JSON value, for formats that embed it in their own (YAML, Gemini's
    `functionResponse`)."""
    return envelope.model_dump(mode="json", exclude_none=True)


def tool_responses(results: Sequence[ToolResultMessage]) -> str:
    """Each result in `<tool_response>` tags, one per line group (Hermes, Qwen, GLM and their relatives)."""
    if len(results) == 1:  # the usual turn: one call (no generator to join)
        return f"<tool_response>\n{result_text(results[0].envelope)}\n</tool_response>"
    return "\n".join(f"<tool_response>\n{result_text(r.envelope)}\n</tool_response>" for r in results)
