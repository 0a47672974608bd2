"""MCP both ways: any MCP server's tools behind tether's guards, and any tether toolset served over MCP.

    MCPToolset.stdio("uvx mcp-server-time")     a server's tools as a toolset (also .http(url), .sse(url))
    serve_stdio(Executor(tools))                tools served to an MCP client on stdin/stdout, guarded
    streamable_http_app(Executor(tools), tokens)   the same over streamable HTTP, bearer tokens required

Needs the `mcp` extra: pip install 'tether[mcp]'.
"""

import importlib.util

if importlib.util.find_spec("mcp") is None:  # pragma: no cover - the extra is installed wherever tests run
    from tether.exceptions import UserError

    raise UserError("tether.mcp needs the MCP SDK: pip install 'tether[mcp]'.")
from tether.mcp._client import MCPToolset as MCPToolset
from tether.mcp._server import BearerTokens as BearerTokens
from tether.mcp._server import mcp_server as mcp_server
from tether.mcp._server import serve_stdio as serve_stdio
from tether.mcp._server import streamable_http_app as streamable_http_app

__all__ = ["BearerTokens", "MCPToolset", "mcp_server", "serve_stdio", "streamable_http_app"]
