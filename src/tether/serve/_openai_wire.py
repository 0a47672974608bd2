"""The Chat Completions wire format as the endpoint reads and writes it: requests, errors, chunks."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ApiError",
    "ChatMessageIn",
    "ChatRequest",
    "Chunks",
    "FunctionCallIn",
    "NamedToolChoice",
    "ToolCallIn",
    "ToolDef",
    "completion",
    "completion_id",
    "request_schema",
]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class FunctionCallIn(_Open):
    name: str
    arguments: str = "{}"


class ToolCallIn(_Open):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCallIn


class ChatMessageIn(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    def text(self) -> str:
        """The content as text (the text parts of a list of parts)."""
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")


class _FunctionDef(_Open):
    name: str = Field(min_length=1)


class ToolDef(_Open):
    type: Literal["function"]
    function: _FunctionDef


class _Named(BaseModel):
    name: str


class NamedToolChoice(BaseModel):
    type: Literal["function"] = "function"
    function: _Named


class _StreamOptions(_Open):
    include_usage: bool = False


class ChatRequest(_Open):
    """A `/v1/chat/completions` request. Fields not named here (temperature, max_tokens, stop, seed, ...) are
    passed on to the upstream model as they are."""

    model: str
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool = False
    stream_options: _StreamOptions | None = None
    tools: list[ToolDef] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    parallel_tool_calls: bool = True
    n: Literal[1] = 1
    """Several choices per request are not supported (one model output is parsed per request)."""

    def passed_on(self) -> dict[str, Any]:
        """The fields tether does not interpret, for the upstream request."""
        return dict(self.model_extra or {})


def request_schema() -> dict[str, Any]:
    """`ChatRequest`'s JSON Schema with its definitions inlined, for the OpenAPI document (where a `$defs`
    reference would point at the document's root)."""
    schema = ChatRequest.model_json_schema()
    defs: dict[str, Any] = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            node = cast("dict[str, Any]", node)
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return inline(defs[ref.removeprefix("#/$defs/")])
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in cast("list[Any]", node)]
        return node

    return inline(schema)


class ApiError(Exception):
    """An error answered in OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, with tether's
    `suggestion` beside them."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        suggestion: str | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.suggestion = suggestion

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {
            "message": self.message,
            "type": self.type,
            "param": self.param,
            "code": self.code,
        }
        if self.suggestion:
            error["suggestion"] = self.suggestion
        return {"error": error}


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


class Chunks:
    """The SSE events of one streamed answer, as bytes ready to send: `chat.completion.chunk`s of its single
    choice (the fixed part of each serialised once), error events, comments and the closing `[DONE]`."""

    def __init__(self, model: str):
        head = {
            "id": completion_id(),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        self._head = json.dumps(head)[:-1].encode() + b', "choices": [{"index": 0, "delta": '
        self._model = model

    def delta(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        end = b"null" if finish_reason is None else json.dumps(finish_reason).encode()
        return (
            b"data: " + self._head + json.dumps(delta).encode() + b', "finish_reason": ' + end + b"}]}" + _END
        )

    def usage(self, usage: dict[str, Any] | None) -> bytes:
        return (
            b"data: "
            + self._head[: self._head.rindex(b"[")]
            + b"[], "
            + json.dumps({"usage": usage})[1:].encode()
            + _END
        )

    @staticmethod
    def error(error: ApiError) -> bytes:
        return b"data: " + json.dumps(error.body()).encode() + _END

    @staticmethod
    def comment(name: str, value: Any) -> bytes:
        """An SSE comment line, `: name {json}`: skipped by conforming clients, the `openai` SDK included."""
        return b": " + name.encode() + b" " + json.dumps(value).encode() + _END

    DONE = b"data: [DONE]\r\n\r\n"


_END = b"\r\n\r\n"


def completion(
    model: str, message: dict[str, Any], finish_reason: str, usage: dict[str, Any] | None
) -> dict[str, Any]:
    """A whole `chat.completion` of the single choice."""
    body: dict[str, Any] = {
        "id": completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
    }
    if usage is not None:
        body["usage"] = usage
    return body
