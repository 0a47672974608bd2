"""What an MCP server offers, as tether tools: its tools, and a `read_resource` / `get_prompt` tool for a
server that lists resources / prompts. Each tool sends its request through the toolset's connection."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import mcp_types as types

from mcp import Client
from tether.mcp._results import GET_PROMPT, READ_RESOURCE, data_of, spec_of
from tether.tools import Tool

__all__ = ["Send", "offered_tools"]

T = TypeVar("T")
AnyTool = Tool[..., Any]


class Send(Protocol):
    """Sends one request on the toolset's connection (from any event loop) and returns its answer."""

    def __call__(self, request: Callable[[Client], Awaitable[T]], /) -> Awaitable[T]: ...


async def offered_tools(client: Client, send: Send) -> dict[str, AnyTool]:
    """The server's tools as now listed (every page), each calling it through `send`."""
    listed: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        listed.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    tools: dict[str, AnyTool] = {}
    for listing in listed:
        spec = spec_of(listing)
        tools[spec.name] = Tool(spec, _caller(listing.name, send))
    if client.server_capabilities.resources is not None and "read_resource" not in tools:
        resources = (await client.list_resources()).resources
        if resources:  # a server that only declares the capability gets no tool that reads nothing
            known = "; ".join(f"{r.uri} ({r.description or r.name})" for r in resources[:20])
            spec = READ_RESOURCE.model_copy(
                update={"description": f"{READ_RESOURCE.description} Known resources: {known}"}
            )
            tools["read_resource"] = Tool(spec, _reader(send))
    if client.server_capabilities.prompts is not None and "get_prompt" not in tools:
        prompts = (await client.list_prompts()).prompts
        if prompts:
            known = "; ".join(
                f"{p.name}({', '.join(a.name for a in p.arguments or [])}): {p.description or ''}"
                for p in prompts[:20]
            )
            spec = GET_PROMPT.model_copy(update={"description": f"{GET_PROMPT.description} Known: {known}"})
            tools["get_prompt"] = Tool(spec, _prompter(send))
    return tools


def _caller(name: str, send: Send) -> Callable[..., Awaitable[Any]]:
    async def call(**arguments: Any) -> Any:
        result = await send(lambda c: c.call_tool(name, arguments))
        return data_of(result, name)

    return call


def _reader(send: Send) -> Callable[..., Awaitable[Any]]:
    async def read_resource(uri: str) -> Any:
        result = await send(lambda c: c.read_resource(uri))
        out: list[dict[str, Any]] = [
            c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents
        ]
        return out[0].get("text", out[0]) if len(out) == 1 else out

    return read_resource


def _prompter(send: Send) -> Callable[..., Awaitable[Any]]:
    async def get_prompt(name: str, arguments: dict[str, str] | None = None) -> Any:
        result = await send(lambda c: c.get_prompt(name, arguments))
        return [
            {"role": m.role, **m.content.model_dump(mode="json", by_alias=True, exclude_none=True)}
            for m in result.messages
        ]

    return get_prompt
