"""`openai`: OpenAI's native tool calls, whole or streamed (Chat Completions and Responses API shapes).

Streamed `delta.tool_calls[i].function.arguments` fragments are assembled per index; the fragments are
passed on as `CallDelta`s as they come and `partial_calls()` parses what has arrived.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from tether._literals import loads
from tether.dialects._dialect import Dialect
from tether.dialects._native import NativeParser
from tether.dialects._prompt import openai_tool_json
from tether.dialects._render import json_text
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["OpenAI"]


def _d(v: Any) -> dict[str, Any]:
    return cast(dict[str, Any], v) if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return cast(list[Any], v) if isinstance(v, list) else []


class _Parser(NativeParser):
    def on_event(self, event: Mapping[str, Any]) -> None:
        if "choices" in event:
            for choice in _l(event["choices"]):
                c = _d(choice)
                if "message" in c:
                    self._message(_d(c["message"]))
                if "delta" in c:
                    self._delta(_d(c["delta"]))
                if c.get("finish_reason"):
                    self.finish_all()
        elif "output" in event and isinstance(event["output"], list):
            for item in _l(event["output"]):
                self._item(_d(item))
        elif isinstance(event.get("type"), str) and str(event["type"]).startswith("response."):
            self._response_event(event)
        elif "tool_calls" in event or "role" in event:
            self._message(dict(event))
        elif event.get("type") == "function_call":
            self._item(dict(event))

    def _message(self, m: dict[str, Any]) -> None:
        reasoning = m.get("reasoning_content") or m.get("reasoning")
        if isinstance(reasoning, str):
            self._emit.reasoning(reasoning)
        if isinstance(m.get("content"), str):
            self._emit.text(m["content"])
        for n, tc in enumerate(_l(m.get("tool_calls"))):
            t = _d(tc)
            fn = _d(t.get("function"))
            call = self.pending(("m", n), t.get("id") or None, fn.get("name"))
            args = fn.get("arguments")
            if isinstance(args, dict):
                call.arguments = cast(dict[str, Any], args)
            elif isinstance(args, str):
                self.add_arguments(call, args)
        self.finish_all()

    def _delta(self, d: dict[str, Any]) -> None:
        reasoning = d.get("reasoning_content") or d.get("reasoning")
        if isinstance(reasoning, str):
            self._emit.reasoning(reasoning)
        if isinstance(d.get("content"), str):
            self._emit.text(d["content"])
        for tc in _l(d.get("tool_calls")):
            t = _d(tc)
            key = ("d", t.get("index", 0))
            fn = _d(t.get("function"))
            if t.get("id"):  # a new call begins
                if key in self._pending and self._pending[key].id != t["id"]:
                    self.finish(key)  # a new call reusing the index
                self._finish_before(key)
            call = self.pending(key, t.get("id") or None, fn.get("name"))
            if isinstance(fn.get("arguments"), str):
                self.add_arguments(call, fn["arguments"])

    def _finish_before(self, key: tuple[str, Any]) -> None:
        """Providers stream parallel calls one after another: when call `key` begins, the calls before it whose
        arguments are already complete JSON are done, and can start while the model goes on."""
        index = key[1]
        if not isinstance(index, int):
            return
        earlier = [k for k in self._pending if k[0] == "d" and isinstance(k[1], int) and k[1] < index]
        for other in earlier:
            parts = self._pending[other].parts
            parsed = loads("".join(parts), strip_extra=False) if parts else None
            if parsed is not None and parsed.ok and not parsed.repairs:
                self.finish(other)

    def _item(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "function_call":
            key = ("r", item.get("id") or item.get("call_id"))
            call = self.pending(key, item.get("call_id") or item.get("id"), item.get("name"))
            if isinstance(item.get("arguments"), str) and not call.parts:
                self.add_arguments(call, item["arguments"])
            self.finish(key)
        elif kind == "message":
            for part in _l(item.get("content")):
                p = _d(part)
                if p.get("type") == "output_text" and isinstance(p.get("text"), str):
                    self._emit.text(p["text"])
        elif kind == "reasoning":
            for part in _l(item.get("summary")):
                if isinstance(_d(part).get("text"), str):
                    self._emit.reasoning(_d(part)["text"])

    def _response_event(self, e: Mapping[str, Any]) -> None:
        kind = e["type"]
        if kind == "response.output_item.added":
            item = _d(e.get("item"))
            if item.get("type") == "function_call":
                self.pending(
                    ("r", item.get("id") or item.get("call_id")),
                    item.get("call_id") or item.get("id"),
                    item.get("name"),
                )
        elif kind == "response.function_call_arguments.delta":
            self.add_arguments(self.pending(("r", e.get("item_id"))), str(e.get("delta") or ""))
        elif kind == "response.output_item.done":
            item = _d(e.get("item"))
            if item.get("type") == "function_call":
                self._item(item)
        elif kind == "response.output_text.delta":
            self._emit.text(str(e.get("delta") or ""))
        elif kind == "response.completed":
            self.finish_all()


class OpenAI(Dialect):
    """OpenAI native tool calls."""

    name: ClassVar[str] = "openai"

    parser = _Parser

    def render_tools(self, tools: ToolIndex) -> str:
        """The `tools` request parameter, as JSON (native formats are not taught in the prompt)."""
        return json.dumps(openai_tool_json(tools), ensure_ascii=False)

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        """`role: tool` messages, one JSON object per line."""
        return "\n".join(
            json.dumps(
                {
                    "role": "tool",
                    "tool_call_id": r.call_id,
                    "content": r.envelope.model_dump_json(exclude_none=True),
                }
            )
            for r in results
        )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """An assistant message with `tool_calls` (arguments as JSON strings), as JSON."""
        if not calls:
            return ""
        tool_calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json_text(c.arguments)},
            }
            for c in calls
        ]
        return json_text({"role": "assistant", "content": None, "tool_calls": tool_calls})
