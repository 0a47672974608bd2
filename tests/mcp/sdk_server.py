"""An MCP server written with the official SDK, run as a subprocess by the interop tests.

`python sdk_server.py [stdio|streamable-http|sse] [PID_FILE]`; over HTTP it prints `listening on URL` when ready. Its tools exercise what tether maps: annotations,
structured output, errors, a crash, a hang, stderr output and a tool list that changes.
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("tether-test")


class Sum(BaseModel):
    total: int


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(total=a + b)


@server.tool(annotations=ToolAnnotations(idempotent_hint=True, read_only_hint=False))
def set_flag(name: str) -> str:
    """Set a flag (idempotent)."""
    return f"set {name}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def delete_all() -> str:
    """Delete everything (destructive)."""
    return "deleted"


@server.tool()
def echo(text: str) -> str:
    """Echo text back, writing a line to stderr."""
    print(f"echo was called with {text!r}", file=sys.stderr, flush=True)
    return text


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def where() -> dict[str, str]:
    """Where the server runs: its working folder and its TETHER_TEST_MARK variable."""
    return {"cwd": os.getcwd(), "mark": os.environ.get("TETHER_TEST_MARK", "")}


@server.tool()
def fail(reason: str) -> str:
    """Always fails."""
    raise ValueError(reason)


@server.tool()
def crash() -> str:
    """Exit the server process at once."""
    os._exit(3)


@server.tool()
async def hang(seconds: float = 60) -> str:
    """Block the whole server: its event loop sleeps, so it answers nothing."""
    time.sleep(seconds)  # noqa: ASYNC251 - blocking the loop is the point
    return "woke"


@server.tool()
def slow(seconds: float = 60) -> str:
    """Take long in a worker thread: the server still answers other requests."""
    time.sleep(seconds)
    return "done"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool and tell the client its tool list changed."""
    server.add_tool(lambda: "new", name="fresh", description="A tool added at run time.")
    await ctx.notify_tools_changed()
    return "grown"


@server.resource("note://greeting")
def greeting() -> str:
    """A short text resource."""
    return "hello from a resource"


@server.prompt()
def review(language: str) -> str:
    """Ask for a code review."""
    return f"Review this {language} code for bugs."


def serve_http(transport: str) -> None:
    """Listen on a port the system picks, say which on stdout (the readiness line), then serve."""
    import socket

    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    print(f"listening on http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])


if __name__ == "__main__":
    print(f"sdk_server starting pid={os.getpid()}", file=sys.stderr, flush=True)
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if len(sys.argv) > 2:  # a file to write this process's id to, for tests that check it was stopped
        with open(sys.argv[2], "a") as pids:
            print(os.getpid(), file=pids)
    if transport == "stdio":
        server.run("stdio")
    else:
        serve_http(transport)
