"""`json_calls`: Meowstik's `{"toolCalls": [{"type", "id", "operation", "parameters", "priority"}]}` (seed 000).

Raw or inside a ```json fence. Each call is checked on its own: an invalid call becomes an error and the
valid ones still come through. `operation` (a human-readable description) is kept as an annotation.

Each call completes as soon as its own object in the list closes, not when the whole JSON does, so that a
`send_chat` reaches the user (and a side-effect-free tool starts) while the model is still writing the calls
after it. That early read takes strict JSON objects only; from the first object that is not, the rest of
the list is read when the JSON ends, leniently and with repairs, as the whole list used to be.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from tether._literals import loads, strict_object
from tether.dialects._bodies import BodyStream
from tether.dialects._calls import RepairScopes
from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._events import PartialCall
from tether.dialects._regions import Opener
from tether.dialects._render import json_text
from tether.dialects._results import result_value
from tether.dialects._tools import ToolIndex
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["ToolCallsJson"]

_RAW = re.compile(r"\{\s*[\"']?toolCalls")
_RAW_VIABLE = re.compile(r"\{\s*[\"']?[A-Za-z]{0,9}")
_FENCED = re.compile(r"```(?:json)?\s*\{\s*[\"']?toolCalls")
_LIST_HEAD = re.compile(r"\s*(?:json)?\s*\{\s*\"toolCalls\"\s*:\s*\[")
_LIST_HEAD_WITHIN = 64
_NEXT_ITEM = re.compile(r"[^\s,]")
_STRUCTURE = re.compile(r"[\"{}\[\]]")
_IN_STRING = re.compile(r"[\"\\]")


class _Items:
    """Finds the objects of a region's `toolCalls` list as each one closes, while the region streams.

    Scans each new piece once (strings and brackets, found by regular expressions), keeping only the text of
    the object it is in, and stops for good at the list's end or at anything it cannot read exactly: what
    is left is read when the region ends.
    """

    __slots__ = ("at", "depth", "ended", "escape", "head", "in_string", "listed", "parts", "read", "stopped")

    def __init__(self, body_at: int):
        self.at = body_at
        """Absolute offset of the next piece."""
        self.head = ""
        """The region's start, until the list's `[` has been read."""
        self.listed = False
        self.stopped = False
        self.ended = False
        """The list's `]` was read: every item in it has been read."""
        self.depth = 0
        self.in_string = False
        self.escape = False
        """A string's backslash ended the last piece: the next piece's first character is escaped."""
        self.parts: list[str] = []
        """The text of the object being read, in pieces."""
        self.read = 0
        """Items read so far (each became a call or an error)."""

    def feed(self, chunk: str) -> list[tuple[str, int]]:
        """The items `chunk` completes, as (their JSON text, absolute end offset)."""
        if self.stopped:
            return []
        text = chunk
        if not self.listed:
            self.head += chunk
            m = _LIST_HEAD.match(self.head)
            if m is None:
                self.stopped = len(self.head) > _LIST_HEAD_WITHIN
                return []
            self.at += m.end()
            self.listed, text, self.head = True, self.head[m.end() :], ""
        closed: list[tuple[str, int]] = []
        n = len(text)
        pos = 0
        since = 0  # where the object being read begins in `text`
        if self.escape and n:
            self.escape, pos = False, 1
        while pos < n:
            if self.in_string:
                m = _IN_STRING.search(text, pos)
                if m is None:
                    pos = n
                elif m.group() == "\\":
                    self.escape = m.end() == n
                    pos = m.end() + 1
                else:
                    self.in_string, pos = False, m.end()
                continue
            if self.depth == 0:  # between the list's items
                m = _NEXT_ITEM.search(text, pos)
                if m is None:
                    pos = n
                    break
                if m.group() != "{":  # the list's end, or an item that is not an object
                    self.stopped, self.ended = True, m.group() == "]"
                    break
                since, self.depth, pos = m.start(), 1, m.end()
                continue
            m = _STRUCTURE.search(text, pos)
            if m is None:
                pos = n
                break
            c, pos = m.group(), m.end()
            if c == '"':
                self.in_string = True
            elif c in "{[":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth == 0:
                    self.parts.append(text[since:pos])
                    closed.append(("".join(self.parts), self.at + pos))
                    self.parts = []
        if self.depth > 0 and not self.stopped:
            self.parts.append(text[since:])
        self.at += n
        return closed


@dataclass(frozen=True, slots=True)
class _Envelope:
    """`{"toolCalls": [...]}`, each call read as soon as its own object in the list closes."""

    fenced: bool = False
    """The body may begin with a code fence's `json` language tag."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        self.rest(out, text, span, complete, 0)

    def stream(self, out: Emitter, start: int, at: int, keep: int) -> BodyStream:
        return _EnvelopeStream(self, out, start, at)

    def rest(self, out: Emitter, body: str, span: tuple[int, int], complete: bool, read: int) -> None:
        """Record the calls of `body` from `toolCalls[read]` on."""
        if self.fenced:
            body = body[4:] if body.startswith("json") else body
        parsed = loads(body)
        if not parsed.ok:
            after = f" after toolCalls[{read - 1}]" if read else ""
            out.fail(f"invalid JSON{after}: {parsed.error}", span, body)
            return
        repairs = list(parsed.repairs)
        if not complete and not any(r.kind == "unbalanced_brackets" for r in repairs):
            repairs.append(Repair(kind="unterminated", message="the closing code fence is missing"))
        value: Any = parsed.value
        items: Any = cast("dict[str, Any]", value).get("toolCalls") if isinstance(value, dict) else value
        if not isinstance(items, list):
            out.fail("toolCalls must be a list of calls", span, body)
            return
        scopes = RepairScopes(repairs, "$.toolCalls")
        for n, item in enumerate(cast("list[Any]", items)[read:], read):
            _one(out, item, n, span, scopes.scope(f"$.toolCalls[{n}]", f"$.toolCalls[{n}].parameters"))


class _EnvelopeStream:
    __slots__ = ("body", "items", "out", "start")

    def __init__(self, body: _Envelope, out: Emitter, start: int, at: int):
        self.body, self.out, self.start = body, out, start
        self.items = _Items(at)

    def progress(self, chunk: str) -> None:
        items = self.items
        for text, end in items.feed(chunk):
            value = strict_object(text)
            if value is None:  # not strict JSON: this item and the rest are read with the whole region
                items.stopped, items.ended = True, False
                return
            _one(self.out, value, items.read, (self.start, end), [])
            items.read += 1

    def end(self, text: str, span: tuple[int, int], complete: bool) -> None:
        if self.items.ended and self.items.read:
            return  # every call was read as its object closed: nothing is left to read
        self.body.rest(self.out, text, span, complete, self.items.read)

    def partial(self) -> PartialCall | None:
        return None


def _one(out: Emitter, item: Any, n: int, span: tuple[int, int], repairs: list[Repair]) -> None:
    raw = json.dumps(item, ensure_ascii=False)[:300]
    if not isinstance(item, dict):
        out.fail(f"toolCalls[{n}] must be an object", span, raw)
        return
    call = cast("dict[str, Any]", item)
    name = call.get("type")
    if not isinstance(name, str) or not name:
        out.fail(f"toolCalls[{n}] needs a string 'type' (the tool's name)", span, raw)
        return
    params = call.get("parameters", {})
    own: list[Repair] = []
    if params is None:
        params = {}
    if not isinstance(params, dict):
        out.fail(f"toolCalls[{n}].parameters must be an object", span, raw)
        return
    if "parameters" not in call:
        own.append(Repair(kind="missing_parameters", message="read a call without parameters as {}"))
    priority = call.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int | float)):
        out.fail(f"toolCalls[{n}].priority must be a number", span, raw)
        return
    if isinstance(priority, float):
        if not priority.is_integer():
            own.append(Repair(kind="rounded_priority", message=f"rounded priority {priority}"))
        priority = round(priority)
    call_id = call.get("id")
    operation = call.get("operation")
    out.call(
        name,
        cast("dict[str, Any]", params),
        span,
        [*repairs, *own],
        call_id=call_id if isinstance(call_id, str) and call_id else None,
        priority=priority,
        annotations=(f"operation: {operation}",) if isinstance(operation, str) and operation else (),
    )


class ToolCallsJson(Dialect):
    """Meowstik's JSON tool-call envelope."""

    name: ClassVar[str] = "json_calls"

    openers = (
        Opener("```", ends=("```",), body=_Envelope(fenced=True), guard=_FENCED, guard_len=40),
        Opener(
            "{", balanced=True, body=_Envelope(), guard=_RAW, guard_len=24, viable=_RAW_VIABLE, quotes='"'
        ),
    )

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
            props = cast("dict[str, Any]", spec.input_schema.get("properties") or {})
            required = set(cast("list[str]", spec.input_schema.get("required") or []))
            params = ", ".join(
                f"{k}{'*' if k in required else ''}: {cast('dict[str, Any]', v).get('type', 'any')}"
                for k, v in props.items()
            )
            lines.append(f"- {spec.name}: {spec.description.strip()} ({params})")
        return "\n".join(lines)

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        items = [{"id": r.call_id, "type": r.name, "result": result_value(r.envelope)} for r in results]
        return json.dumps({"toolResults": items}, ensure_ascii=False)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        if not calls:
            return ""
        items = [{"type": c.name, "id": c.id, "parameters": c.arguments} for c in calls]
        return json_text({"toolCalls": items})
