"""Anthropic's Messages API through the official SDK, with native `tool_use` blocks or a text dialect."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from tether._model_events import ModelChunk
from tether.dialects import get_dialect, result_text
from tether.exceptions import ModelError, UserError
from tether.models._base import Model, ModelRequest
from tether.tools import Toolset, export_tools
from tether.types import (
    AssistantMessage,
    ErrorEnvelope,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["AnthropicModel"]

_Create = Callable[..., Awaitable[Any]]


class AnthropicModel(Model):
    """A Claude model on the Messages API.

    Args:
        model: The model name, e.g. `claude-sonnet-5-5`.
        api_key: Defaults to `ANTHROPIC_API_KEY`.
        base_url: Another endpoint that speaks the Messages API (defaults to `ANTHROPIC_BASE_URL`, then
            Anthropic's own).
        native_tools: Offer tools through the API's `tools` parameter and read its `tool_use` blocks (the
            `anthropic` dialect). With False the model is asked for plain text, and the agent's text
            dialect applies.
        client: A configured `anthropic.AsyncAnthropic` (overrides base_url and api_key).
        max_tokens: The most tokens one turn may generate (the API requires a bound).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        native_tools: bool = True,
        client: AsyncAnthropic | None = None,
        max_tokens: int = 4096,
    ):
        try:
            import anthropic
        except ImportError as e:
            raise UserError("AnthropicModel needs the anthropic SDK: pip install 'tether[anthropic]'.") from e
        if max_tokens < 1:
            raise UserError("AnthropicModel(max_tokens=...) must be at least 1.")
        self.name = f"anthropic:{model}"
        self.model = model
        self.max_tokens = max_tokens
        self.native_dialect = "anthropic" if native_tools else None
        if client is None:
            if not (api_key or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
                raise UserError("ANTHROPIC_API_KEY is not set: export it, or pass api_key=....")
            client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url)
        self.client = client

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": _messages(request),
            "stream": True,
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = export_tools(Toolset(*request.tools), "anthropic")
        import anthropic

        # one call for every SDK version: the overloads' `Omit`/`NotGiven` sentinels changed over time
        create = cast("_Create", self.client.messages.create)
        try:
            stream = await create(**params)
            events = 0
            read = get_dialect("anthropic").model_events  # the one reading of the wire's JSON as typed events
            try:
                async for event in stream:
                    events += 1
                    for typed in read(cast("dict[str, Any]", event.model_dump(exclude_none=True))):
                        yield typed
            finally:
                await stream.close()  # release the connection when the turn is cancelled midway
            if events == 0:  # e.g. a web page: the SDK finds no `event:` lines in it and yields nothing
                kind = stream.response.headers.get("content-type", "no content type")
                raise ModelError(
                    f"{self.name} at {self.client.base_url}: the server's answer ({kind}) held no Messages "
                    "API events; is the base URL the API's (without /v1)?"
                )
        except anthropic.AnthropicError as e:
            raise ModelError(f"{self.name} at {self.client.base_url}: {type(e).__name__}: {e}") from e
        except json.JSONDecodeError as e:
            raise ModelError(
                f"{self.name} at {self.client.base_url}: the server streamed an event that is not JSON ({e})."
            ) from e


def _messages(request: ModelRequest) -> list[dict[str, Any]]:
    """Tether messages as Messages API turns: the same role twice in a row becomes one turn."""
    aliases = Toolset(*request.tools)
    out: list[dict[str, Any]] = []
    for message in request.messages:
        role_blocks = _blocks(message, aliases)
        if role_blocks is None:
            continue
        role, blocks = role_blocks
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    for turn in out:
        content = turn["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            turn["content"] = content[0]["text"]
    return out


def _blocks(message: Message, aliases: Toolset) -> tuple[str, list[dict[str, Any]]] | None:
    match message:
        case SystemMessage():
            return None  # the request's system prompt goes in `system=`
        case UserMessage():
            return "user", [{"type": "text", "text": message.content}]
        case AssistantMessage():
            # the API refuses empty text blocks; reasoning is not sent back (thinking blocks need signatures)
            blocks: list[dict[str, Any]] = (
                [{"type": "text", "text": message.content}] if message.content else []
            )
            blocks += [
                {"type": "tool_use", "id": c.id, "name": aliases.alias_of(c.name), "input": c.arguments}
                for c in message.tool_calls
            ]
            return ("assistant", blocks) if blocks else None
        case ToolResultMessage():
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.call_id,
                "content": result_text(message.envelope),
            }
            if isinstance(message.envelope, ErrorEnvelope):
                block["is_error"] = True
            return "user", [block]
