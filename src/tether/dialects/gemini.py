"""`gemini`: Gemini's native `functionCall` parts, whole or streamed (each chunk carries whole parts)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from tether.dialects._dialect import Dialect
from tether.dialects._native import NativeParser
from tether.dialects._render import json_text
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Gemini"]


def _d(v: Any) -> dict[str, Any]:
    return cast(dict[str, Any], v) if isinstance(v, dict) else {}


class _Parser(NativeParser):
    def on_event(self, event: Mapping[str, Any]) -> None:
        if isinstance(event.get("candidates"), list):
            for cand in cast(list[Any], event["candidates"])[:1]:  # the first candidate is the reply
                self.on_event(_d(_d(cand).get("content")))
        elif isinstance(event.get("parts"), list):
            for part in cast(list[Any], event["parts"]):
                self._part(_d(part))
        elif "functionCall" in event or "text" in event:
            self._part(dict(event))

    def _part(self, part: dict[str, Any]) -> None:
        fc = part.get("functionCall") or part.get("function_call")
        if isinstance(fc, dict):
            f = cast(dict[str, Any], fc)
            key = object()
            call = self.pending(key, f.get("id") or None, f.get("name"))
            args = f.get("args")
            call.arguments = cast(dict[str, Any], args) if isinstance(args, dict) else {}
            self.finish(key)
        elif isinstance(part.get("text"), str):
            if part.get("thought"):
                self._emit.reasoning(part["text"])
            else:
                self._emit.text(part["text"])


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
                    "response": r.envelope.model_dump(mode="json", exclude_none=True),
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
