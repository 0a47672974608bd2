"""`gemini`: Gemini's native `functionCall` parts, whole or streamed (each chunk carries whole parts)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from tether._model_events import ModelChunk, ReasoningChunk, TextChunk, ToolCallDone
from tether.dialects._dialect import Dialect
from tether.dialects._native import NativeParser
from tether.dialects._render import json_text
from tether.dialects._results import result_value
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Gemini"]


def _d(v: Any) -> dict[str, Any]:
    return cast("dict[str, Any]", v) if isinstance(v, dict) else {}


def _read(event: Mapping[str, Any]) -> list[ModelChunk]:
    """One Gemini JSON object (a response or stream chunk, a content, or a part) as the typed events a model
    streams: each `functionCall` part is a whole call."""
    out: list[ModelChunk] = []
    if isinstance(event.get("candidates"), list):
        for cand in cast("list[Any]", event["candidates"])[:1]:  # the first candidate is the reply
            out += _read(_d(_d(cand).get("content")))
    elif isinstance(event.get("parts"), list):
        for part in cast("list[Any]", event["parts"]):
            _part(_d(part), out)
    elif "functionCall" in event or "text" in event:
        _part(dict(event), out)
    return out


def _part(part: dict[str, Any], out: list[ModelChunk]) -> None:
    fc = part.get("functionCall") or part.get("function_call")
    if isinstance(fc, dict):
        f = cast("dict[str, Any]", fc)
        call_id, name, args = f.get("id"), f.get("name"), f.get("args")
        out.append(
            ToolCallDone(
                "part",  # whole, so done at once: the next call may use the same key
                call_id if isinstance(call_id, str) and call_id else None,
                name if isinstance(name, str) and name else None,
                cast("dict[str, Any]", args) if isinstance(args, dict) else {},
            )
        )
    elif isinstance(part.get("text"), str):
        out.append(ReasoningChunk(part["text"]) if part.get("thought") else TextChunk(part["text"]))


class _Parser(NativeParser):
    read = staticmethod(_read)


class Gemini(Dialect):
    """Gemini native function calling."""

    name: ClassVar[str] = "gemini"

    parser = _Parser

    def render_tools(self, tools: ToolIndex) -> str:
        """The `tools` request parameter (`functionDeclarations`), as JSON."""
        decls = [
            {"name": s.name, "description": s.description, "parameters": s.input_schema}
            for s in tools.specs.values()
        ]
        return json.dumps([{"functionDeclarations": decls}], ensure_ascii=False)

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        """A user turn of `functionResponse` parts, as JSON."""
        parts = [
            {
                "functionResponse": {
                    "id": r.call_id,
                    "name": r.name,
                    "response": result_value(r.envelope),
                }
            }
            for r in results
        ]
        return json.dumps({"role": "user", "parts": parts}, ensure_ascii=False)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """A model turn of `functionCall` parts, as JSON."""
        if not calls:
            return ""
        parts = [{"functionCall": {"id": c.id, "name": c.name, "args": c.arguments}} for c in calls]
        return json_text({"role": "model", "parts": parts})
