"""`openai`: OpenAI's native tool calls, whole or streamed (Chat Completions and Responses API shapes).

`read` turns each JSON object into typed model events (what `OpenAIModel` streams, too); streamed
`delta.tool_calls[i].function.arguments` fragments become `ToolCallChunk`s, assembled per index, passed on
as `CallDelta`s as they come, and `partial_calls()` parses what has arrived.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
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
from tether.dialects._prompt import openai_tool_json
from tether.dialects._render import json_text
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import ToolCall, ToolResultMessage

__all__ = ["OpenAI"]


def _d(v: Any) -> dict[str, Any]:
    return cast("dict[str, Any]", v) if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return cast("list[Any]", v) if isinstance(v, list) else []


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _read(event: Mapping[str, Any]) -> list[ModelChunk]:
    """One OpenAI JSON object (a Chat Completions chunk or response, a message, a Responses API event or
    response) as the typed events a model streams."""
    out: list[ModelChunk] = []
    if "choices" not in event and "output" not in event:  # a Responses API stream event, the usual case
        kind = event.get("type")
        read = _RESPONSE_EVENTS.get(kind) if type(kind) is str else None
        if read is not None:
            read(event, out)
            return out
    if "choices" in event:
        for choice in _l(event["choices"]):
            c = _d(choice)
            if "message" in c:
                _message(_d(c["message"]), out)
            if "delta" in c:
                _delta(_d(c["delta"]), out)
            if c.get("finish_reason"):
                out.append(Finish(str(c["finish_reason"])))
        usage = _d(event.get("usage"))
        if usage:
            out.append(Usage(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))))
    elif "output" in event and isinstance(event["output"], list):  # a whole Responses API response
        for item in _l(event["output"]):
            _item(_d(item), out)
        _response_usage(event, out)
    elif isinstance(event.get("type"), str) and str(event["type"]).startswith("response."):
        _response_event(event, out)
    elif "tool_calls" in event or "role" in event:
        _message(dict(event), out)
    elif event.get("type") == "function_call":
        _item(dict(event), out)
    return out


def _int(v: Any) -> int:
    return v if isinstance(v, int) else 0


def _message(m: dict[str, Any], out: list[ModelChunk]) -> None:
    reasoning = m.get("reasoning_content") or m.get("reasoning")
    if isinstance(reasoning, str):
        out.append(ReasoningChunk(reasoning))
    if isinstance(m.get("content"), str):
        out.append(TextChunk(m["content"]))
    for n, tc in enumerate(_l(m.get("tool_calls"))):
        t = _d(tc)
        fn = _d(t.get("function"))
        args = fn.get("arguments")
        whole = cast("str | dict[str, Any]", args) if isinstance(args, str | dict) else None
        out.append(ToolCallDone(f"message:{n}", _s(t.get("id")), _s(fn.get("name")), whole))
    out.append(Finish())  # a whole message: every call in it is complete


def _delta(d: dict[str, Any], out: list[ModelChunk]) -> None:
    reasoning = d.get("reasoning_content") or d.get("reasoning")
    if isinstance(reasoning, str):
        out.append(ReasoningChunk(reasoning))
    if isinstance(d.get("content"), str):
        out.append(TextChunk(d["content"]))
    for tc in _l(d.get("tool_calls")):
        t = _d(tc)
        index = t.get("index", 0)
        fn = _d(t.get("function"))
        arguments = fn.get("arguments")
        out.append(
            ToolCallChunk(
                index if isinstance(index, int | str) else 0,
                _s(t.get("id")),
                _s(fn.get("name")),
                arguments if isinstance(arguments, str) else "",
            )
        )


def _item(item: dict[str, Any], out: list[ModelChunk]) -> None:
    kind = item.get("type")
    if kind == "function_call":
        _function_call(item, out)
    elif kind == "message":
        for part in _l(item.get("content")):
            p = _d(part)
            if p.get("type") == "output_text" and isinstance(p.get("text"), str):
                out.append(TextChunk(p["text"]))
    elif kind == "reasoning":
        for part in _l(item.get("summary")):
            if isinstance(_d(part).get("text"), str):
                out.append(ReasoningChunk(_d(part)["text"]))


def _function_call(item: dict[str, Any], out: list[ModelChunk]) -> None:
    """A Responses API `function_call` item, stated whole."""
    arguments = item.get("arguments")
    out.append(
        ToolCallDone(
            _item_key(item),
            _s(item.get("call_id")) or _s(item.get("id")),
            _s(item.get("name")),
            arguments if isinstance(arguments, str) else None,
        )
    )


def _item_key(item: dict[str, Any]) -> str:
    """A Responses API call is known by its item id (its deltas name only that)."""
    return f"item:{item.get('id') or item.get('call_id')}"


def _response_event(e: Mapping[str, Any], out: list[ModelChunk]) -> None:
    read = _RESPONSE_EVENTS.get(e["type"])
    if read is not None:
        read(e, out)


def _item_added(e: Mapping[str, Any], out: list[ModelChunk]) -> None:
    item = _d(e.get("item"))
    if item.get("type") == "function_call":
        call_id = _s(item.get("call_id")) or _s(item.get("id"))
        out.append(ToolCallChunk(_item_key(item), call_id, _s(item.get("name"))))


def _arguments_delta(e: Mapping[str, Any], out: list[ModelChunk]) -> None:
    out.append(ToolCallChunk(f"item:{e.get('item_id')}", arguments=str(e.get("delta") or "")))


def _item_done(e: Mapping[str, Any], out: list[ModelChunk]) -> None:
    item = _d(e.get("item"))
    if item.get("type") == "function_call":
        _function_call(item, out)


def _text_delta(e: Mapping[str, Any], out: list[ModelChunk]) -> None:
    out.append(TextChunk(str(e.get("delta") or "")))


def _completed(e: Mapping[str, Any], out: list[ModelChunk]) -> None:
    out.append(Finish("completed"))
    _response_usage(_d(e.get("response")), out)


_RESPONSE_EVENTS: dict[str, Callable[[Mapping[str, Any], list[ModelChunk]], None]] = {
    "response.output_item.added": _item_added,
    "response.function_call_arguments.delta": _arguments_delta,
    "response.output_item.done": _item_done,
    "response.output_text.delta": _text_delta,
    "response.completed": _completed,
}
"""The Responses API stream events read, by `type` (the others hold nothing a model event carries)."""


def _response_usage(response: Mapping[str, Any], out: list[ModelChunk]) -> None:
    """A Responses API response's `usage` (`input_tokens`, `output_tokens`), as Chat Completions' is read."""
    usage = _d(response.get("usage"))
    if usage:
        out.append(Usage(_int(usage.get("input_tokens")), _int(usage.get("output_tokens"))))


class _Parser(NativeParser):
    read = staticmethod(_read)


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
                    "content": result_text(r.envelope),
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
