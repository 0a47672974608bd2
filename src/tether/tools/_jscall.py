"""`fn(arg, {key: 'value'}, [1, 2,])`: a JavaScript-like call expression, as seed 003 writes tool calls."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tether._literals import parse_value, skip_ws

__all__ = ["JsCall", "parse_js_call"]

_NAME = re.compile(r"\s*([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)\s*\(")


@dataclass(frozen=True, slots=True)
class JsCall:
    name: str = ""
    args: list[Any] = field(default_factory=list[Any])
    end: int = 0
    """Index just after the closing parenthesis."""
    error: str | None = None


def parse_js_call(text: str, start: int = 0) -> JsCall:
    """Parse `name(args...)` at `start`; never raises: problems come back in `error`."""
    # The lenient literal parser lives with the dialects; importing it here at module level would make
    # tether.tools and tether.dialects import each other.

    m = _NAME.match(text, start)
    if m is None:
        return JsCall(error="expected a function name followed by '('", end=start)
    name = re.sub(r"\s+", "", m.group(1))
    args: list[Any] = []
    i = skip_ws(text, m.end())
    while True:
        if i >= len(text):
            return JsCall(name, args, i, "missing ')' at the end of the call")
        if text[i] == ")":
            return JsCall(name, args, i + 1)
        value = parse_value(text, i, flavor="js")
        if not value.ok:
            return JsCall(name, args, value.end, value.error)
        args.append(value.value)
        i = skip_ws(text, value.end)
        if i < len(text) and text[i] == ",":
            i = skip_ws(text, i + 1)
        elif i < len(text) and text[i] != ")":
            return JsCall(name, args, i, f"expected ',' or ')' after argument {len(args)}, found {text[i]!r}")
