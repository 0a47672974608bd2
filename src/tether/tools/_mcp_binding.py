"""A YAML tool whose `mcp_server` says how to reach the server: calls go to that server's tool."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from tether.exceptions import ToolError, UserError
from tether.types import ToolSpec

if TYPE_CHECKING:
    from tether.mcp import MCPToolset

__all__ = ["mcp_function"]

_KEYS = frozenset({"command", "url", "transport", "tool", "env"})
_servers: dict[tuple[str, str, str], MCPToolset] = {}
_lock = threading.Lock()


def mcp_function(spec: ToolSpec, entry: dict[str, Any], where: str) -> Callable[..., Awaitable[Any]]:
    """The function that forwards a call to the server's tool (started on the first call, then shared)."""
    unknown = set(entry) - _KEYS
    command, url = entry.get("command"), entry.get("url")
    transport = entry.get("transport", "stdio" if command else "http")
    if unknown or (command is None) == (url is None) or transport not in ("stdio", "http", "sse"):
        raise UserError(
            f"{where}: mcp_server takes either command (e.g. 'uvx mcp-server-time') or url, with optional "
            f"tool (the server's name for it), env and transport (http or sse); got {sorted(entry)}."
        )
    remote = str(entry.get("tool", spec.name))
    env: dict[str, str] = {str(k): str(v) for k, v in cast("dict[Any, Any]", entry.get("env") or {}).items()}
    key = (transport, str(command or url), repr(sorted(env.items())))

    async def forward(**arguments: Any) -> Any:
        server = _server(key, entry)
        try:
            await server.connect()
        except UserError as e:
            raise ToolError("CONNECTION_INACTIVE", str(e), recoverable=False,
                            suggestion="Do not call it again in this run; tell the user the server did not start.") from e  # fmt: skip
        found = server.tools().get(remote)
        if found is None or found.function is None:
            raise ToolError("UNKNOWN_TOOL", f"the MCP server {server.name} has no tool {remote!r} "
                            f"(it has {', '.join(server.names())})", recoverable=False,
                            suggestion="Do not call it again; tell the user the tool's definition names a tool its server lacks.")  # fmt: skip
        return await found.function(**arguments)

    return forward


def _server(key: tuple[str, str, str], entry: dict[str, Any]) -> MCPToolset:
    from tether.mcp import MCPToolset

    with _lock:
        found = _servers.get(key)
        if found is None or found.closed:  # closed (e.g. by MCPToolset.close_all): start it again
            transport, target, _ = key
            if transport == "stdio":
                found = MCPToolset.stdio(target, env=entry.get("env"))
            elif transport == "sse":
                found = MCPToolset.sse(target)
            else:
                found = MCPToolset.http(target)
            _servers[key] = found
        return found
