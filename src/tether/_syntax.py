"""Call expressions, `name(1, "x", key=value)` with Python or JavaScript literals, and lists of them; and
bracket balancing over such text. The one parser of call syntax: dialects read calls with it (pythonic,
fenced), tools read seed 003's examples (`fn({a: 1}) => 2`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tether._literals import Flavor, LooseValue, parse_value, skip_ws
from tether.types import Repair

__all__ = ["Balancer", "SyntaxCall", "parse_call", "parse_call_list"]

NAME = re.compile(r"[A-Za-z_][\w.:\-]*")
_KWARG = re.compile(r"([A-Za-z_]\w*)\s*=(?!=)")
_NAME_VALUE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


class Balancer:
    """Tracks bracket depth across chunks, ignoring brackets inside strings."""

    __slots__ = ("depth", "escape", "quote", "quotes")

    def __init__(self, quotes: str):
        self.quotes = quotes
        self.depth = 0
        self.quote = ""
        self.escape = False

    def feed(self, s: str, start: int = 0) -> int:
        """Consume `s[start:]`; returns the index just past the bracket that balances, or -1."""
        quote, escape, depth, quotes = self.quote, self.escape, self.depth, self.quotes
        for i in range(start, len(s)):
            c = s[i]
            if quote:
                if escape:
                    escape = False
                elif c == "\\":
                    escape = True
                elif c == quote:
                    quote = ""
            elif c in quotes:
                quote = c
            elif c in "[{(":
                depth += 1
            elif c in "]})":
                depth -= 1
                if depth <= 0:
                    self.quote, self.escape, self.depth = quote, escape, 0
                    return i + 1
        self.quote, self.escape, self.depth = quote, escape, depth
        return -1


@dataclass(slots=True)
class SyntaxCall:
    """One call as written: its name, positional and keyword arguments."""

    name: str = ""
    args: list[Any] = field(default_factory=list[Any])
    kwargs: dict[str, Any] = field(default_factory=dict[str, Any])
    start: int = 0
    end: int = 0
    repairs: list[Repair] = field(default_factory=list[Repair])
    error: str | None = None


def parse_call(text: str, i: int, end: int, flavor: Flavor) -> SyntaxCall:
    """Parse `name(args)` at `i` (after whitespace); `.error` is set when it is not one."""
    i = skip_ws(text, i, end)
    call = SyntaxCall(start=i)
    m = NAME.match(text, i, end)
    if not m:
        call.error, call.end = "expected a function name", i
        return call
    call.name = m.group().rstrip(".:-")
    i = skip_ws(text, m.end(), end)
    if i >= end or text[i] != "(":
        call.error, call.end = f"expected '(' after {call.name}", i
        return call
    i += 1
    first = True
    while True:
        i = skip_ws(text, i, end)
        if i >= end:
            call.repairs.append(
                Repair(kind="unbalanced_brackets", message="closed a call cut off by the end")
            )
            call.end = end
            return call
        if text[i] == ")":
            call.end = i + 1
            return call
        if not first:
            if text[i] != ",":
                call.error, call.end = f"expected ',' or ')' in the arguments of {call.name}", i
                return call
            i = skip_ws(text, i + 1, end)
            if i < end and text[i] == ")":
                call.end = i + 1
                return call
            if i >= end:
                continue
        first = False
        key = None
        if flavor == "python":
            km = _KWARG.match(text, i, end)
            if km:
                key, i = km.group(1), km.end()
        elif call.kwargs:
            call.error, call.end = "positional argument after keyword arguments", i
            return call
        path = f"$.{key}" if key else f"$[{len(call.args)}]"
        v = parse_value(text, i, end, flavor=flavor)
        if not v.ok and key is not None:
            v = _name_value(text, i, end, key) or v
        for r in v.repairs:
            call.repairs.append(r.model_copy(update={"path": path}) if r.path == "$" else _reroot(r, path))
        if not v.ok:
            call.error, call.end = f"in the arguments of {call.name}: {v.error}", v.end
            return call
        if key is None:
            if call.kwargs:
                call.error, call.end = "positional argument after keyword arguments", i
                return call
            call.args.append(v.value)
        else:
            if key in call.kwargs:
                call.repairs.append(
                    Repair(kind="duplicate_argument", message=f"{key} given twice", path=path)
                )
            call.kwargs[key] = v.value
        i = v.end


def _skip_call(text: str, call: SyntaxCall, end: int) -> int:
    """Where a call that could not be read ends (just past its closing parenthesis), so that the calls after
    it are still read; -1 when it has no balanced argument list."""
    m = NAME.match(text, call.start, end)
    if m is None:
        return -1
    i = skip_ws(text, m.end(), end)
    if i >= end or text[i] != "(":
        return -1
    k = Balancer("\"'").feed(text[:end], i)
    return k


def _name_value(text: str, i: int, end: int, key: str) -> LooseValue | None:
    """`key=my_data`: a variable name where a value belongs (common for Java/JavaScript-style functions).
    The call is kept, with the name as a string and a repair saying so: a schema expecting a string
    accepts it, one expecting a number refuses it."""
    m = _NAME_VALUE.match(text, i, end)
    if m is None:
        return None
    j = skip_ws(text, m.end(), end)
    if j < end and text[j] not in ",)":
        return None  # `f(x)`, `a + b`: an expression, not a name
    name = m.group()
    repair = Repair(
        kind="unresolved_name",
        message=f"{key}={name} names a variable, not a value: read as the string {name!r}",
        path="$",
    )
    return LooseValue(name, m.end(), [repair])


def _reroot(r: Repair, path: str) -> Repair:
    if r.path and r.path.startswith("$"):
        return r.model_copy(update={"path": path + r.path[1:]})
    return r


def parse_call_list(
    text: str, flavor: Flavor = "python"
) -> tuple[list[SyntaxCall], str | None, list[Repair]]:
    """Parse `[call, call, ...]` or a single bare `call` (the whole text); returns calls, error, repairs.

    Calls that fail are returned with `.error` set; the list-level error is for text that is no call list.
    """
    end = len(text)
    i = skip_ws(text, 0)
    repairs: list[Repair] = []
    calls: list[SyntaxCall] = []
    if i < end and text[i] != "[":
        c = parse_call(text, i, end, flavor)
        calls.append(c)
        while True:
            j = c.end if c.error is None else _skip_call(text, c, end)
            if j < 0:
                break
            j = skip_ws(text, j)
            if j < end and text[j] in ",;":
                j = skip_ws(text, j + 1)
            if j >= end:
                break
            c = parse_call(text, j, end, flavor)
            calls.append(c)
        return calls, None, repairs
    i += 1
    while True:
        i = skip_ws(text, i)
        if i >= end:
            repairs.append(
                Repair(kind="unbalanced_brackets", message="closed a call list cut off by the end")
            )
            return calls, None, repairs
        if text[i] == "]":
            return calls, None, repairs
        if calls:
            if text[i] != ",":
                return calls, f"expected ',' or ']' after call {calls[-1].name}", repairs
            i = skip_ws(text, i + 1)
            if i < end and text[i] == "]":
                return calls, None, repairs
        c = parse_call(text, i, end, flavor)
        calls.append(c)
        if c.error:
            i = _skip_call(text, c, end)
            if i < 0:
                return calls, None, repairs
        else:
            i = c.end
