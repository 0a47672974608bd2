"""OpenAI-compatible chat models through the official SDK: OpenAI, OpenRouter, vLLM, Ollama, llama.cpp server,
LM Studio — any server that speaks the Chat Completions API, with native tools or a text dialect."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from tether._model_events import ModelChunk
from tether.dialects import get_dialect, result_text
from tether.exceptions import ModelError, UserError
from tether.models._base import Model, ModelRequest
from tether.tools import Toolset, export_tools
from tether.types import AssistantMessage, Message, SystemMessage, ToolResultMessage, ToolSpec, UserMessage

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

__all__ = ["OpenAIModel"]


class OpenAIModel(Model):
    """A Chat Completions model.

    Args:
        model: The model name, e.g. `gpt-4o-mini` or `qwen2.5:7b` on Ollama.
        base_url: Another OpenAI-compatible server, e.g. `http://localhost:11434/v1`.
        api_key: Defaults to `OPENAI_API_KEY`; not needed with a `base_url` (local servers ignore it).
        native_tools: Offer tools through the API's `tools` parameter and read `tool_calls` (the `openai`
            dialect). With False the model is asked for plain text, and the agent's text dialect applies.
        client: A configured `openai.AsyncOpenAI` (overrides base_url and api_key).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        native_tools: bool = True,
        client: AsyncOpenAI | None = None,
    ):
        try:
            import openai
        except ImportError as e:
            raise UserError("OpenAIModel needs the openai SDK: pip install 'tether[openai]'.") from e
        self.name = f"openai:{model}"
        self.model = model
        self.native_dialect = "openai" if native_tools else None
        if client is None:
            base_url = base_url or os.environ.get("OPENAI_BASE_URL")
            api_key = api_key or os.environ.get("OPENAI_API_KEY") or None  # an empty key is no key
            if api_key is None:
                if base_url is None:
                    raise UserError(
                        "OPENAI_API_KEY is not set (or empty): export it, pass api_key=..., or point --base-url (base_url=) "
                        "at a local OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio), which needs no key."
                    )
                api_key = "unused"  # local servers ignore the key; the SDK insists on one
            client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key)
        self.client = client

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        import openai

        messages = cast("list[ChatCompletionMessageParam]", _messages(request))
        try:
            if request.tools:
                tools = cast("list[ChatCompletionToolParam]", _tools(request.tools))
                stream = await self.client.chat.completions.create(
                    model=self.model, messages=messages, tools=tools, stream=True
                )
            else:
                stream = await self.client.chat.completions.create(
                    model=self.model, messages=messages, stream=True
                )
            events = 0
            read = get_dialect("openai").model_events  # the one reading of the wire's JSON as typed events
            try:
                async for chunk in stream:
                    events += 1
                    for event in read(chunk.model_dump(exclude_none=True)):
                        yield event
            finally:
                await stream.close()  # release the connection when the turn is cancelled midway
            if events == 0:  # e.g. a web page: the SDK finds no `data:` lines in it and yields nothing
                kind = stream.response.headers.get("content-type", "no content type")
                raise ModelError(
                    f"{self.name} at {self.client.base_url}: the server's answer ({kind}) held no Chat "
                    "Completions events; is the base URL the API's (it usually ends in /v1)?"
                )
        except openai.OpenAIError as e:
            raise ModelError(f"{self.name} at {self.client.base_url}: {type(e).__name__}: {e}") from e
        except json.JSONDecodeError as e:
            raise ModelError(
                f"{self.name} at {self.client.base_url}: the server streamed an event that is not JSON ({e})."
            ) from e


def _tools(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return export_tools(Toolset(*specs), "openai")


def _messages(request: ModelRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    aliases = Toolset(*request.tools)
    for message in request.messages:
        out.extend(_message(message, aliases))
    return out


def _message(message: Message, aliases: Toolset) -> list[dict[str, Any]]:
    match message:
        case SystemMessage():
            return []  # the request's system prompt is sent once, first
        case UserMessage():
            return [{"role": "user", "content": message.content}]
        case AssistantMessage():
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": aliases.alias_of(c.name), "arguments": json.dumps(c.arguments)}}
                    for c in message.tool_calls
                ]  # fmt: skip
            return [entry]
        case ToolResultMessage():
            return [
                {
                    "role": "tool",
                    "tool_call_id": message.call_id,
                    "content": result_text(message.envelope),
                }
            ]
