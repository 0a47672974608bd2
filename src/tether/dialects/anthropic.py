"""`anthropic`: Anthropic's native `tool_use` blocks, whole or streamed (`input_json_delta` fragments)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from tether._model_events import (
    Finish,
    ModelChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    ToolCallDone,
    Usage,
)
from tether.dialects._dialect import Dialect
from tether.dialects._native import NativeParser
from tether.dialects._render import json_text
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Anthropic"]


def _d(v: Any) -> dict[str, Any]:
    return cast("dict[str, Any]", v) if isinstance(v, dict) else {}


def _read(event: Mapping[str, Any]) -> list[ModelChunk]:
    """One Messages API JSON object (a stream event, a message, or a content block) as the typed events a
    model streams."""
    out: list[ModelChunk] = []
    kind = event.get("type")
    if kind == "message_start":
        message = _d(event.get("message"))
        for n, block in enumerate(_l(message.get("content"))):  # usually none: blocks stream after it
            _block(f"content:{n}", _d(block), out, streaming=False)
        usage = _d(message.get("usage"))
        if usage:
            out.append(Usage(input_tokens=_int(usage.get("input_tokens"))))
    elif kind == "content_block_start":
        _block(_index(event), _d(event.get("content_block")), out, streaming=True)
    elif kind == "content_block_delta":
        d = _d(event.get("delta"))
        if d.get("type") == "text_delta":
            out.append(TextChunk(str(d.get("text") or "")))
        elif d.get("type") == "thinking_delta":
            out.append(ReasoningChunk(str(d.get("thinking") or "")))
        elif d.get("type") == "input_json_delta":
            out.append(ToolCallChunk(_index(event), arguments=str(d.get("partial_json") or "")))
    elif kind == "content_block_stop":
        out.append(ToolCallDone(_index(event)))
    elif kind == "message_delta":
        usage = _d(event.get("usage"))
        if usage:
            out.append(Usage(output_tokens=_int(usage.get("output_tokens"))))
    elif kind == "message_stop":
        out.append(Finish())
    elif isinstance(event.get("content"), list):
        for n, block in enumerate(cast("list[Any]", event["content"])):
            _block(f"content:{n}", _d(block), out, streaming=False)
        out.append(Finish(str(event.get("stop_reason") or "")))
    elif kind in ("tool_use", "text", "thinking"):
        _block("content:0", dict(event), out, streaming=False)
    return out


def _l(v: Any) -> list[Any]:
    return cast("list[Any]", v) if isinstance(v, list) else []


def _index(event: Mapping[str, Any]) -> int | str:
    index = event.get("index", 0)
    return index if isinstance(index, int | str) else 0


def _int(v: Any) -> int:
    return v if isinstance(v, int) else 0


def _block(index: int | str, block: dict[str, Any], out: list[ModelChunk], *, streaming: bool) -> None:
    kind = block.get("type")
    if kind == "text":
        out.append(TextChunk(str(block.get("text") or "")))
    elif kind == "thinking":
        out.append(ReasoningChunk(str(block.get("thinking") or "")))
    elif kind in ("tool_use", "server_tool_use"):
        call_id = block.get("id") if isinstance(block.get("id"), str) else None
        name = block.get("name") if isinstance(block.get("name"), str) else None
        inp = block.get("input")
        if streaming:  # the input follows as `input_json_delta`s (a start rarely holds some already)
            whole = json_text(inp) if isinstance(inp, dict) and inp else ""
            out.append(ToolCallChunk(index, call_id or None, name or None, whole))
        else:
            out.append(ToolCallDone(index, call_id or None, name or None, _mapping(inp)))


def _mapping(v: Any) -> dict[str, Any] | None:
    return cast("dict[str, Any]", v) if isinstance(v, dict) else None


class _Parser(NativeParser):
    read = staticmethod(_read)


class Anthropic(Dialect):
    """Anthropic native tool use."""

    name: ClassVar[str] = "anthropic"

    parser = _Parser

    def render_tools(self, tools: ToolIndex) -> str:
        """The `tools` request parameter, as JSON."""
        specs = [
            {"name": s.name, "description": s.description, "input_schema": s.input_schema}
            for s in tools.specs.values()
        ]
        return json.dumps(specs, ensure_ascii=False)

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        """A user message of `tool_result` blocks, as JSON."""
        blocks = [
            {
                "type": "tool_result",
                "tool_use_id": r.call_id,
                "content": result_text(r.envelope),
                **({"is_error": True} if not r.envelope.ok else {}),
            }
            for r in results
        ]
        return json.dumps({"role": "user", "content": blocks}, ensure_ascii=False)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """An assistant message of `tool_use` blocks, as JSON."""
        if not calls:
            return ""
        blocks = [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in calls]
        return json_text({"role": "assistant", "content": blocks})
