"""An MCP server that speaks only the 2025-06-18 revision (initialize handshake, notifications for changes),
written without the SDK: newline-delimited JSON-RPC on stdin/stdout, as servers built on older SDKs answer.

`python old_server.py [REVISION]`. Its tools: `add`, and `grow`, which adds `fresh` and sends
`notifications/tools/list_changed` (there is no `subscriptions/listen` in this revision).
"""

from __future__ import annotations

import json
import sys
from typing import Any

REVISION = sys.argv[1] if len(sys.argv) > 1 else "2025-06-18"
NUMBERS = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
tools: list[dict[str, Any]] = [
    {"name": "add", "description": "Add two integers.", "inputSchema": {**NUMBERS, "required": ["a", "b"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "grow", "description": "Add a tool.", "inputSchema": {"type": "object", "properties": {}}},
]  # fmt: skip


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result of one request, or None for a method this revision does not have."""
    if method == "initialize":
        return {
            "protocolVersion": REVISION,
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "old-revision", "version": "0.1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": tools}
    if method == "tools/call":
        arguments: dict[str, int] = params.get("arguments") or {}
        if params["name"] == "add":
            return text(str(arguments["a"] + arguments["b"]))
        if params["name"] == "grow":
            if all(t["name"] != "fresh" for t in tools):
                tools.append({"name": "fresh", "description": "New.", "inputSchema": {"type": "object"}})
            send({"method": "notifications/tools/list_changed"})
            return text("grown")
        if params["name"] == "fresh":
            return text("new")
    return None


for line in sys.stdin:
    message = json.loads(line)
    print(f"old_server got {message.get('method')}", file=sys.stderr, flush=True)
    if "id" not in message or "method" not in message:
        continue  # a notification (initialized) or a response
    result = answer(message["method"], message.get("params") or {})
    if result is None:
        send({"id": message["id"], "error": {"code": -32601, "message": f"no method {message['method']}"}})
    else:
        send({"id": message["id"], "result": result})
