"""A 2026-revision MCP server (the SDK's low-level `Server`, over stdio) that offers tool list changes but
does not keep a `subscriptions/listen` stream, in one of several ways.

`python unlistening_server.py MODE [http]`: over stdio, or streamable HTTP on a port the system picks (it
prints `listening on URL` when ready). MODE one of:
- `reject`: answers the request with an error (method not found), as a server without the method does;
- `silent`: never acknowledges it (nor answers);
- `close`: answers it at once, without an acknowledgment (a graceful close of a stream never opened);
- `brief`: acknowledges it, then closes it gracefully at once, each time it is asked again;
- `drop`: acknowledges it, then ends it with an error (the stream lost while the connection lives);
- `unhonored`: acknowledges it without the tool list changes asked for.

Its tools: `add`, and `grow`, which adds `fresh`. Each request it gets is written to stderr.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY

from mcp import MCPError

MODE = sys.argv[1]
NUMBERS = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
tools = [
    types.Tool(name="add", description="Add two integers.", input_schema={**NUMBERS, "required": ["a", "b"]}),
    types.Tool(name="grow", description="Add a tool.", input_schema={"type": "object", "properties": {}}),
]


def heard(method: str) -> None:
    print(f"unlistening_server got {method}", file=sys.stderr, flush=True)


async def list_tools(_: Any, __: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    heard("tools/list")
    return types.ListToolsResult(tools=tools)


async def call_tool(_: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    heard(f"tools/call {params.name}")
    arguments: dict[str, Any] = dict(params.arguments or {})
    if params.name == "add":
        text = str(arguments["a"] + arguments["b"])
    elif params.name == "grow":
        tools.append(types.Tool(name="fresh", description="New.", input_schema={"type": "object"}))
        text = "grown"
    else:
        text = "new"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def listen(ctx: Any, params: types.SubscriptionsListenRequestParams) -> types.SubscriptionsListenResult:
    heard("subscriptions/listen")
    if MODE == "reject":
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found: subscriptions/listen")
    if MODE == "silent":
        await anyio.sleep_forever()
    if MODE in ("brief", "drop", "unhonored"):
        honored = types.SubscriptionFilter() if MODE == "unhonored" else params.notifications
        await ctx.session.send_notification(
            types.SubscriptionsAcknowledgedNotification(
                params=types.SubscriptionsAcknowledgedNotificationParams(
                    notifications=honored, _meta={SUBSCRIPTION_ID_META_KEY: ctx.request_id}
                )
            ),
            related_request_id=ctx.request_id,
        )
        if MODE == "drop":
            raise MCPError(types.INTERNAL_ERROR, "listen stream ended: subscription backend down")
        if MODE == "unhonored":
            await anyio.sleep_forever()
    return types.SubscriptionsListenResult(_meta={SUBSCRIPTION_ID_META_KEY: ctx.request_id})


def build() -> Server[Any]:
    return Server(
        "unlistening", on_list_tools=list_tools, on_call_tool=call_tool, on_subscriptions_listen=listen
    )


async def over_stdio() -> None:
    server = build()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def over_http() -> None:
    import socket

    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    app = build().streamable_http_app()
    print(f"listening on http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])


if __name__ == "__main__":
    print(f"unlistening_server starting mode={MODE}", file=sys.stderr, flush=True)
    if sys.argv[2:] == ["http"]:
        over_http()
    else:
        anyio.run(over_stdio)
