"""What OpenAI's Chat Completions API streams (`stream=True`): `chat.completion.chunk` events, a tool call's
arguments in small fragments, then a chunk with the finish reason (recorded shapes, ids made up)."""

import json
from typing import Any

_BASE = {
    "id": "chatcmpl-perin",
    "object": "chat.completion.chunk",
    "created": 1774504800,
    "model": "gpt-4o-mini",
}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {**_BASE, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_Xq3pZ1") -> list[dict[str, Any]]:
    """One native tool call, its JSON arguments streamed 8 characters at a time."""
    text = json.dumps(arguments)
    head = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    chunks = [_chunk({"role": "assistant", "content": None, "tool_calls": [head]})]
    for i in range(0, len(text), 8):
        chunks.append(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": text[i : i + 8]}}]}))
    return [*chunks, _chunk({}, "tool_calls")]


def text(reply: str) -> list[dict[str, Any]]:
    """A streamed text reply, a few characters per chunk."""
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": reply[i : i + 5]}) for i in range(0, len(reply), 5)]
    return [*chunks, _chunk({}, "stop")]
