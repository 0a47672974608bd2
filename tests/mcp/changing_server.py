"""An MCP server whose tool list changes on request, speaking the 2025-06-18 revision (changes told by
`notifications/tools/list_changed`), written without the SDK so it can misbehave: newline-delimited
JSON-RPC on stdin/stdout.

Its tools: `add`; `grow` adds `fresh`; `drop` removes it; `flood(times, pause_s)` changes its list `times`
times, notifying each time (pausing between), and ends listing `flooded`; `listings` says how many `tools/list` requests it got;
`die` exits at once.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
NUMBERS = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
TIMES = {"type": "object", "properties": {"times": {"type": "integer"}, "pause_s": {"type": "number"}},
         "required": ["times"]}  # fmt: skip
FRESH: dict[str, Any] = {"name": "fresh", "description": "A tool added at run time.", "inputSchema": EMPTY}
tools: list[dict[str, Any]] = [
    {"name": "add", "description": "Add two integers.", "inputSchema": {**NUMBERS, "required": ["a", "b"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "grow", "description": "Add the tool fresh.", "inputSchema": EMPTY},
    {"name": "drop", "description": "Remove the tool fresh.", "inputSchema": EMPTY},
    {"name": "flood", "description": "Change the tool list many times.", "inputSchema": TIMES},
    {"name": "listings", "description": "How many times the tools were listed.", "inputSchema": EMPTY},
    {"name": "die", "description": "Exit at once.", "inputSchema": EMPTY},
]  # fmt: skip
listed = 0


writing = threading.Lock()


def send(message: dict[str, Any]) -> None:
    with writing:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def changed() -> None:
    send({"method": "notifications/tools/list_changed"})


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def named(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"The tool {name}.", "inputSchema": EMPTY}


def flood(times: int, pause_s: float) -> None:
    global tools
    base = [t for t in tools if not t["name"].startswith(("wave", "flooded"))]
    for n in range(times):
        tools = [*base, named(f"wave{n}")]
        changed()
        time.sleep(pause_s)
    tools = [*base, named("flooded")]
    changed()


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
    global tools
    if name == "add":
        return text(str(arguments["a"] + arguments["b"]))
    if name == "grow":
        tools = [t for t in tools if t["name"] != "fresh"] + [FRESH]
        changed()
        return text("grown")
    if name == "drop":
        tools = [t for t in tools if t["name"] != "fresh"]
        changed()
        return text("dropped")
    if name == "flood":
        pause_s: float = arguments.get("pause_s", 0)
        if pause_s:
            threading.Thread(target=flood, args=(arguments["times"], pause_s)).start()
            return text("flooding")
        flood(arguments["times"], 0)
        return text("flooded")
    if name == "listings":
        return text(str(listed))
    if name == "die":
        os._exit(3)
    if any(t["name"] == name for t in tools):
        return text(f"{name} ran")
    return None


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result of one request, or None for a method this revision does not have."""
    global listed
    if method == "initialize":
        return {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "changing", "version": "0.1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        listed += 1
        return {"tools": tools}
    if method == "tools/call":
        return call(params["name"], params.get("arguments") or {})
    return None


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue  # a notification (initialized) or a response
    result = answer(message["method"], message.get("params") or {})
    if result is None:
        send({"id": message["id"], "error": {"code": -32601, "message": f"no {message['method']}"}})
    else:
        send({"id": message["id"], "result": result})
