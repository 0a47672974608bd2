"""`anthropic`: Anthropic's native `tool_use` blocks, whole or streamed (`input_json_delta` fragments)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from tether.dialects._dialect import Dialect
from tether.dialects._native import NativeParser
from tether.dialects._render import json_text
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Anthropic"]


def _d(v: Any) -> dict[str, Any]:
    return cast(dict[str, Any], v) if isinstance(v, dict) else {}


class _Parser(NativeParser):
    def on_event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.on_event(_d(event.get("message")))
        elif kind == "content_block_start":
            self._block(event.get("index", 0), _d(event.get("content_block")), streaming=True)
        elif kind == "content_block_delta":
            d = _d(event.get("delta"))
            if d.get("type") == "text_delta":
                self._emit.text(str(d.get("text") or ""))
            elif d.get("type") == "thinking_delta":
                self._emit.reasoning(str(d.get("thinking") or ""))
            elif d.get("type") == "input_json_delta":
                self.add_arguments(
                    self.pending(("b", event.get("index", 0))), str(d.get("partial_json") or "")
                )
        elif kind == "content_block_stop":
            self.finish(("b", event.get("index", 0)))
        elif kind == "message_stop":
            self.finish_all()
        elif isinstance(event.get("content"), list):
            for n, block in enumerate(cast(list[Any], event["content"])):
                self._block(("c", n), _d(block), streaming=False)
            self.finish_all()
        elif kind in ("tool_use", "text", "thinking"):
            self._block(("c", 0), dict(event), streaming=False)

    def _block(self, index: Any, block: dict[str, Any], *, streaming: bool) -> None:
        kind = block.get("type")
        if kind == "text":
            self._emit.text(str(block.get("text") or ""))
        elif kind == "thinking":
            self._emit.reasoning(str(block.get("thinking") or ""))
        elif kind in ("tool_use", "server_tool_use"):
            key = ("b", index) if streaming else index
            call = self.pending(key, block.get("id") or None, block.get("name"))
            inp = block.get("input")
            if isinstance(inp, dict) and (inp or not streaming):
                call.arguments = cast(dict[str, Any], inp)
            if not streaming:
                self.finish(key)


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
                "content": r.envelope.model_dump_json(exclude_none=True),
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
