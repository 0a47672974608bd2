"""`json_calls`: Meowstik's `{"toolCalls": [{"type", "id", "operation", "parameters", "priority"}]}` (seed 000).

Raw or inside a ```json fence. Each call is checked on its own: an invalid call becomes an error and the
valid ones still come through. `operation` (a human-readable description) is kept as an annotation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar, cast

from tether._literals import loads
from tether.dialects._base import Dialect, Opener, RegionParser
from tether.dialects._calls import RepairScopes
from tether.dialects._tools import ToolIndex
from tether.types import Repair, ToolResultMessage

__all__ = ["JsonCalls"]

_RAW = re.compile(r"\{\s*[\"']?toolCalls")
_RAW_VIABLE = re.compile(r"\{\s*[\"']?[A-Za-z]{0,9}")
_FENCED = re.compile(r"```(?:json)?\s*\{\s*[\"']?toolCalls")


class _Parser(RegionParser):
    openers = (
        Opener("```", ends=("```",), guard=_FENCED, guard_len=40, tag="fenced"),
        Opener("{", balanced=True, guard=_RAW, guard_len=24, viable=_RAW_VIABLE, quotes='"', tag="raw"),
    )

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        if opener.tag == "fenced":
            body = body[4:] if body.startswith("json") else body
        parsed = loads(body)
        if not parsed.ok:
            self.fail(f"invalid JSON: {parsed.error}", span, body)
            return
        repairs = list(parsed.repairs)
        if not complete and not any(r.kind == "unbalanced_brackets" for r in repairs):
            repairs.append(Repair(kind="unterminated", message="the closing code fence is missing"))
        value: Any = parsed.value
        items: Any = cast(dict[str, Any], value).get("toolCalls") if isinstance(value, dict) else value
        if not isinstance(items, list):
            self.fail("toolCalls must be a list of calls", span, body)
            return
        scopes = RepairScopes(repairs, "$.toolCalls")
        for n, item in enumerate(cast(list[Any], items)):
            self._one(item, n, span, scopes.scope(f"$.toolCalls[{n}]", f"$.toolCalls[{n}].parameters"))

    def _one(self, item: Any, n: int, span: tuple[int, int], repairs: list[Repair]) -> None:
        raw = json.dumps(item, ensure_ascii=False)[:300]
        if not isinstance(item, dict):
            self.fail(f"toolCalls[{n}] must be an object", span, raw)
            return
        call = cast(dict[str, Any], item)
        name = call.get("type")
        if not isinstance(name, str) or not name:
            self.fail(f"toolCalls[{n}] needs a string 'type' (the tool's name)", span, raw)
            return
        params = call.get("parameters", {})
        own: list[Repair] = []
        if params is None:
            params = {}
        if not isinstance(params, dict):
            self.fail(f"toolCalls[{n}].parameters must be an object", span, raw)
            return
        if "parameters" not in call:
            own.append(Repair(kind="missing_parameters", message="read a call without parameters as {}"))
        priority = call.get("priority")
        if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int | float)):
            self.fail(f"toolCalls[{n}].priority must be a number", span, raw)
            return
        if isinstance(priority, float):
            if not priority.is_integer():
                own.append(Repair(kind="rounded_priority", message=f"rounded priority {priority}"))
            priority = round(priority)
        call_id = call.get("id")
        operation = call.get("operation")
        self.call(
            name,
            cast(dict[str, Any], params),
            span,
            [*repairs, *own],
            call_id=call_id if isinstance(call_id, str) and call_id else None,
            priority=priority,
            annotations=(f"operation: {operation}",) if isinstance(operation, str) and operation else (),
        )


class JsonCalls(Dialect):
    """Meowstik's JSON tool-call envelope."""

    name: ClassVar[str] = "json_calls"

    def stream_parser(self, tools: ToolIndex) -> _Parser:
        return _Parser(self.name, tools)

    def detect(self, text: str) -> int | None:
        m = _RAW.search(text)
        return m.start() if m else None

    def render_tools(self, tools: ToolIndex) -> str:
        lines = [
            'Reply with one JSON object and nothing else (a ```json fence is allowed): {"toolCalls": [...]}.',
            'Each call: {"type": <tool>, "id": <unique id>, "operation": <what it does, briefly>, '
            '"parameters": {...}, "priority": <number, higher runs first, optional>}.',
            "Calls run in order of priority; results come back as toolResults keyed by id.",
            "",
            "Tools (type: description; parameters as JSON Schema properties, * = required):",
        ]
        for spec in tools.specs.values():
            props = cast(dict[str, Any], spec.input_schema.get("properties") or {})
            required = set(cast(list[str], spec.input_schema.get("required") or []))
            params = ", ".join(
                f"{k}{'*' if k in required else ''}: {cast(dict[str, Any], v).get('type', 'any')}"
                for k, v in props.items()
            )
            lines.append(f"- {spec.name}: {spec.description.strip()} ({params})")
        return "\n".join(lines)

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        items = [
            {"id": r.call_id, "type": r.name, "result": r.envelope.model_dump(mode="json", exclude_none=True)}
            for r in results
        ]
        return json.dumps({"toolResults": items}, ensure_ascii=False)
