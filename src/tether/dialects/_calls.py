"""Reading tool calls out of parsed JSON values, whatever keys the model used."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from tether._literals import (
    Flavor,
    LooseValue,
    loads,
    parse_value,
    skip_ws,
    strict_object,
    strict_value_at,
)
from tether.dialects._emitter import Emitter
from tether.dialects._events import PartialCall
from tether.types import Repair

__all__ = [
    "JsonAnnouncer",
    "JsonCall",
    "RepairScopes",
    "emit_json_calls",
    "read_call",
    "read_calls",
    "read_whole_call",
    "scope_repairs",
]

_NAME_KEYS = ("name", "function", "tool", "tool_name", "operation")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "params", "argument")


@dataclass(slots=True)
class JsonCall:
    """A call read from a JSON value (or why it could not be)."""

    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict[str, Any])
    id: str | None = None
    repairs: list[Repair] = field(default_factory=list[Repair])
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


def _arguments(value: Any, repairs: list[Repair]) -> dict[str, Any] | str:
    if value is None:
        return {}
    if isinstance(value, dict):
        return cast("dict[str, Any]", value)
    if isinstance(value, str):  # OpenAI style: arguments as a JSON string
        parsed = loads(value) if value.strip() else LooseValue({})
        parsed_value: Any = parsed.value
        if parsed.ok and isinstance(parsed_value, dict):
            repairs.extend(parsed.repairs)
            return cast("dict[str, Any]", parsed_value)
        return f"arguments are a string that is not a JSON object: {value[:80]!r}"
    return f"arguments must be an object, got {type(value).__name__}"


def read_call(value: Any, *, single_key: bool = False) -> JsonCall:
    """Read one call from `{"name", "arguments"|"parameters"|...}`, `{"function": {...}}` and kin.

    With `single_key`, `{"tool_name": {...args}}` is read too.
    """
    if not isinstance(value, dict):
        return JsonCall(error=f"a call must be an object, got {type(value).__name__}")
    obj = cast("dict[str, Any]", value)
    fn = obj.get("function")
    if isinstance(fn, dict):
        inner = read_call(fn)
        inner.id = inner.id or _str_or_none(obj.get("id"))
        return inner
    call = JsonCall(id=_str_or_none(obj.get("id") or obj.get("call_id")))
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name is None:
        if single_key and len(obj) == 1:
            ((name, args),) = obj.items()
            result = _arguments(args, call.repairs)
            if isinstance(result, str):
                call.error = result
            else:
                call.name, call.arguments = name, result
                call.extra["args_key"] = name
            return call
        call.error = "a call needs a name"
        return call
    call.name = name.strip()
    arg_key = next((k for k in _ARG_KEYS if k in obj), None)
    call.extra["args_key"] = arg_key
    result = _arguments(obj.get(arg_key) if arg_key else None, call.repairs)
    if isinstance(result, str):
        call.error = result
        return call
    call.arguments = result
    if not call.name:
        call.error = "a call needs a name"
    return call


def read_calls(value: Any, *, single_key: bool = False) -> list[JsonCall]:
    """Calls from one object or a list of them."""
    if isinstance(value, list):
        return [read_call(v, single_key=single_key) for v in cast("list[Any]", value)]
    return [read_call(value, single_key=single_key)]


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def emit_json_calls(
    out: Emitter,
    body: str,
    span: tuple[int, int],
    complete: bool,
    *,
    flavor: Flavor = "json",
    single_key: bool = False,
    extra_repairs: Sequence[Repair] = (),
    announced: str | None = None,
) -> None:
    """Parse `body` as one JSON call or a list of calls and record them (errors for the bad ones).

    `announced` is the id of a call already announced while streaming (see `JsonAnnouncer`).
    """
    if flavor == "json" and complete and not single_key and not extra_repairs:
        plain = _plain_call(body)
        if plain is not None:  # the usual case, read at C speed: strict JSON with `name` and `arguments`
            name, arguments, call_id = plain
            out.call(name, arguments, span, (), call_id=announced or call_id, announced=bool(announced))
            return
    parsed = loads(body, flavor=flavor)
    if not parsed.ok:
        out.fail(f"invalid JSON: {parsed.error}", span, body, call_id=announced)
        return
    repairs = [*extra_repairs, *parsed.repairs]
    if not complete and not any(r.kind == "unbalanced_brackets" for r in repairs):
        repairs.append(Repair(kind="unterminated", message="the call's end marker is missing"))
    is_list = isinstance(parsed.value, list)
    scopes = RepairScopes(repairs, "$")
    for n, c in enumerate(read_calls(parsed.value, single_key=single_key)):
        first = announced if n == 0 and not is_list else None
        if c.error:
            out.fail(c.error, span, body, call_id=first)
            continue
        item = f"$[{n}]" if is_list else "$"
        key = c.extra.get("args_key", "arguments")
        scoped = scopes.scope(item, f"{item}.{key}" if key else item)
        out.call(
            c.name, c.arguments, span, [*scoped, *c.repairs], call_id=first or c.id, announced=bool(first)
        )


def _plain_call(body: str) -> tuple[str, dict[str, Any], str | None] | None:
    """`{"name": ..., "arguments": {...}}` (and an optional id) in strict JSON, as `read_call` would read it;
    None for anything else, which then takes the general path."""
    value = strict_object(body)
    if value is None or isinstance(value.get("function"), dict):
        return None
    name, arguments = value.get("name"), value.get("arguments")
    if not isinstance(name, str) or not name.strip() or not isinstance(arguments, dict):
        return None
    return (
        name.strip(),
        cast("dict[str, Any]", arguments),
        _str_or_none(value.get("id") or value.get("call_id")),
    )


def dumps(value: Any) -> str:
    """Compact JSON for prompts."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def scope_repairs(repairs: Sequence[Repair], item: str, args: str) -> list[Repair]:
    """The repairs that concern one call of a list: those under `item` (a JSON path such as `$[1]`) and
    those of the envelope around it; paths under `args` are re-rooted at `$` (the call's arguments)."""
    return RepairScopes(repairs, item[: item.rfind("[")] if "[" in item else item).scope(item, args)


class RepairScopes:
    """Repairs grouped by list item once, so that scoping every call of a long list stays linear."""

    def __init__(self, repairs: Sequence[Repair], list_path: str):
        self.list_prefix = list_path + "["
        self.shared: list[Repair] = []
        self.items: dict[str, list[Repair]] = {}
        for r in repairs:
            path = r.path
            if path is not None and path.startswith(self.list_prefix):
                close = path.find("]", len(self.list_prefix))
                if close > 0:
                    self.items.setdefault(path[: close + 1], []).append(r)
                    continue
            self.shared.append(r)

    def scope(self, item: str, args: str) -> list[Repair]:
        out: list[Repair] = []
        for r in [*self.shared, *self.items.get(item, [])]:
            path = r.path
            if path is not None and _under(path, args):
                r = r.model_copy(update={"path": "$" + path[len(args) :]})
            out.append(r)
        return out


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


_HEAD = re.compile(r'\s*\{\s*"name"\s*:\s*"([^"\\]{1,128})"\s*,\s*"(?:arguments|parameters)"\s*:')
_STRICT_HEAD = re.compile(
    r'[ \t\n\r]*\{[ \t\n\r]*"name"[ \t\n\r]*:[ \t\n\r]*"([^"\\\x00-\x1f]{1,128})"[ \t\n\r]*,[ \t\n\r]*"arguments"'
    r"[ \t\n\r]*:[ \t\n\r]*"
)
"""`_HEAD` in strict JSON (its blanks, a name JSON reads as written), the key `arguments`, and the blanks after
the colon: what `JsonAnnouncer.whole` reads."""
_HEAD_LIMIT = 256
_OBJECT_END = "} \t\r\n"
"""What may follow a call's arguments to the end of its object."""


def _strict_call(body: str, head: re.Match[str]) -> tuple[str, dict[str, Any], int, int] | None:
    """The call of a body whose `_STRICT_HEAD` matched, when the rest is its arguments (a JSON object, strict)
    and the object's end: its name as written, arguments, and where their text starts and ends."""
    name, start = head.group(1), head.end()
    scanned = strict_value_at(body, start)
    if scanned is None:
        return None
    arguments, end = scanned
    if type(arguments) is not dict or body[end:].strip(" \t\n\r") != "}" or not name.strip():
        return None
    return name, cast("dict[str, Any]", arguments), start, end


def read_whole_call(out: Emitter, body: str, span: tuple[int, int]) -> str | None:
    """`JsonAnnouncer.whole` without an announcer (for a parser that reads a region it found whole, and keeps
    no announcer after it): the id of the call read, or None (nothing done) for any other body."""
    m = _STRICT_HEAD.match(body)
    read = _strict_call(body, m) if m is not None else None
    if read is None:
        return None
    name, arguments, start, end = read
    call_id = out.new_id()
    called = name.strip()
    if called == name:  # the usual call: `stated` makes the same events and call as the three steps below
        out.stated(call_id, name, body[start:end], arguments, span)
    else:  # a padded name: announced as written, called by the name it pads
        out.started(call_id, name)
        out.delta(call_id, body[start:end])
        out.call(called, arguments, span, (), call_id=call_id, announced=True)
    return call_id


class JsonAnnouncer:
    """Announces a `{"name": ..., "arguments": {...}}` call while its region streams.

    `call_started` goes out as soon as the name and the arguments key have arrived, then the arguments'
    JSON text as `call_delta` fragments, holding back only what may still be the end of the object or the
    start of the end marker. `finish` completes the fragments from the final body.
    """

    __slots__ = (
        "args_at",
        "call_id",
        "done",
        "emitted",
        "keep",
        "name",
        "out",
        "parts",
        "pending",
        "prefix",
    )

    def __init__(self, out: Emitter, keep: int):
        self.out = out
        self.keep = keep
        self.prefix = ""
        self.pending = ""
        self.call_id: str | None = None
        self.args_at = 0
        self.emitted = 0
        self.done = False
        self.name = ""
        self.parts: list[str] = []

    def progress(self, chunk: str) -> None:
        if self.done:
            return
        if self.call_id is None:
            self.prefix += chunk
            # the head ends with a colon: one not matched before can only match once one arrives
            m = _HEAD.match(self.prefix) if ":" in chunk else None
            if m is None:
                if len(self.prefix) > _HEAD_LIMIT:
                    self.done = True
                return
            self.call_id = self.out.new_id()
            self.name = m.group(1)
            self.out.started(self.call_id, self.name)
            self.args_at = m.end()
            chunk = self.prefix[m.end() :].lstrip()
            self.args_at += len(self.prefix) - m.end() - len(chunk)
            self.prefix = ""
        elif not self.emitted and not self.pending:  # whitespace before the arguments is not theirs
            value = chunk.lstrip()
            self.args_at += len(chunk) - len(value)
            chunk = value
        pending = self.pending + chunk
        # closing braces and blanks may end the object, not its arguments, and the last `keep` characters may
        # begin the end marker, with more of them before it
        keep = self.keep
        safe = len(pending.rstrip(_OBJECT_END)) - keep
        if safe > 0 and pending[len(pending) - keep - 1] in _OBJECT_END:  # the second rule may hold back more
            safe = min(safe, len(pending[: len(pending) - keep].rstrip(_OBJECT_END)))
        if safe > 0:
            piece = pending[:safe]
            self.out.delta(self.call_id, piece)
            self.parts.append(piece)
            self.emitted += safe
            pending = pending[safe:]
        self.pending = pending

    @property
    def fresh(self) -> bool:
        """Whether no `progress` has come yet."""
        return self.call_id is None and not self.prefix and not self.done

    def whole(self, body: str, span: tuple[int, int]) -> bool:
        """Read a complete region's `body` that arrived whole (no `progress` came), when it is exactly
        `{"name": ..., "arguments": {...}}` in strict JSON: the call is announced, its arguments' text sent as
        one fragment and the call recorded, as `progress(body)`, `finish(body)` and `emit_json_calls` would, with
        one decode instead of three. False (nothing done) for any other body."""
        call_id = read_whole_call(self.out, body, span)
        if call_id is None:
            return False
        self.call_id, self.done = call_id, True
        return True

    def finish_call(self, body: str, span: tuple[int, int]) -> bool:
        """After `progress` announced the call: when the complete region's `body` is exactly `{"name": ...,
        "arguments": {...}}` in strict JSON, send the rest of its arguments' text and record the call, as
        `finish(body)` and `emit_json_calls` would, with one decode instead of two. False (nothing done)
        otherwise."""
        if self.call_id is None:
            return False
        m = _STRICT_HEAD.match(body)
        if m is None or m.end() != skip_ws(body, self.args_at):
            return False
        read = _strict_call(body, m)
        if read is None:
            return False
        name, arguments, start, end = read
        self.out.delta(self.call_id, body[start + self.emitted : end])
        self.out.call(name.strip(), arguments, span, (), call_id=self.call_id, announced=True)
        self.done = True
        return True

    def finish(self, body: str) -> str | None:
        """Send the rest of the arguments' text; returns the announced id (None if nothing was announced)."""
        if self.call_id is None:
            return None
        start = skip_ws(body, self.args_at)
        v = parse_value(body, start)
        end = v.end if v.ok else len(body)
        rest = body[start + self.emitted : end]
        if rest:
            self.out.delta(self.call_id, rest)
        return self.call_id

    def partial(self) -> PartialCall | None:
        """The announced call with the arguments received so far, leniently parsed."""
        if self.call_id is None:
            return None
        value: Any = loads("".join(self.parts)).value if self.parts else {}
        return PartialCall(
            id=self.call_id,
            name=self.name,
            arguments=cast("dict[str, Any]", value) if isinstance(value, dict) else {},
        )
