"""A lenient, linear-time parser for JSON and its relatives (JavaScript and Python literals).

One recursive-descent parser serves three flavours:

- `json`: strict JSON is accepted as is; everything else it tolerates is recorded as a `Repair`
  (trailing commas, single quotes, unquoted keys, raw newlines in strings, Python literals, comments,
  missing commas, unbalanced brackets at the end of the text).
- `js`: JavaScript literals (single, double and backtick strings, unquoted keys, trailing commas,
  `undefined`); only what JavaScript itself would refuse is recorded as a repair.
- `python`: Python literals (`True`, `None`, tuples, single and triple quoted strings); JSON's
  `true`/`false`/`null` are accepted too, as models mix them.

The parser never raises on its input: `parse_value` returns a `LooseValue` whose `error` says what was
wrong. Nesting deeper than `MAX_DEPTH` is an error rather than a `RecursionError`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from tether.types import Repair

__all__ = ["MAX_DEPTH", "Flavor", "LooseValue", "loads", "parse_value", "skip_ws"]

Flavor = Literal["json", "js", "python"]

MAX_DEPTH = 256
"""Deepest nesting of objects and arrays accepted before the text is refused."""

_NUMBER = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_WS = re.compile(r"\s*")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_EXTRA_ESCAPES = {"'": "'", "`": "`", "0": "\0", "v": "\v", "a": "\a", "\n": ""}


@dataclass(slots=True)
class LooseValue:
    """The outcome of parsing one value."""

    value: Any = None
    end: int = 0
    """Index just after the value (or where parsing stopped, on error)."""
    repairs: list[Repair] = field(default_factory=list[Repair])
    error: str | None = None
    error_pos: int | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _refuse(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity are repairs: leave them to the lenient parser


class _Fail(Exception):
    def __init__(self, message: str, pos: int):
        super().__init__(message)
        self.message = message
        self.pos = pos


def skip_ws(text: str, i: int, end: int | None = None) -> int:
    """Index of the first non-whitespace character at or after `i`."""
    m = _WS.match(text, i, len(text) if end is None else end)
    return m.end() if m else i


class _Parser:
    __slots__ = ("end", "flavor", "kinds", "repairs", "text")

    def __init__(self, text: str, end: int, flavor: Flavor):
        self.text = text
        self.end = end
        self.flavor = flavor
        self.repairs: list[Repair] = []
        self.kinds: set[tuple[str, str | None]] = set()

    def repair(self, kind: str, message: str, path: str | None = None) -> None:
        key = (kind, path)
        if key not in self.kinds:  # one record per kind and place is enough for policy
            self.kinds.add(key)
            self.repairs.append(Repair(kind=kind, message=message, path=path))

    # ---------------------------------------------------------------------------------------- helpers

    def ws(self, i: int) -> int:
        text, end = self.text, self.end
        while True:
            i = skip_ws(text, i, end)
            if i + 1 < end and text[i] == "/" and text[i + 1] in "/*":
                if self.flavor != "js":
                    self.repair("comments", "removed a comment")
                if text[i + 1] == "/":
                    j = text.find("\n", i, end)
                    i = end if j < 0 else j + 1
                else:
                    j = text.find("*/", i + 2, end)
                    i = end if j < 0 else j + 2
            elif i < end and text[i] == "#" and self.flavor == "python":
                j = text.find("\n", i, end)
                i = end if j < 0 else j + 1
            else:
                return i

    # ----------------------------------------------------------------------------------------- values

    def value(self, i: int, path: str, depth: int) -> tuple[Any, int]:
        i = self.ws(i)
        if i >= self.end:
            raise _Fail("expected a value, found the end of the text", i)
        c = self.text[i]
        if c == "{":
            return self.obj(i, path, depth + 1)
        if c == "[" or (c == "(" and self.flavor == "python"):
            return self.arr(i, path, depth + 1)
        if c in "\"'`":
            return self.string(i, path)
        if c in "-+.0123456789":
            return self.number(i, path)
        m = _IDENT.match(self.text, i, self.end)
        if m:
            return self.word(m.group(), i, m.end(), path)
        raise _Fail(f"unexpected character {c!r}", i)

    def word(self, word: str, i: int, j: int, path: str) -> tuple[Any, int]:
        if word in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[word], j
        if word in ("True", "False", "None"):
            if self.flavor != "python":
                self.repair("python_literal", f"read Python literal {word}", path)
            return {"True": True, "False": False, "None": None}[word], j
        if word == "undefined":
            if self.flavor != "js":
                self.repair("js_literal", "read undefined as null", path)
            return None, j
        if word in ("NaN", "Infinity", "nan", "inf"):
            if self.flavor == "json":
                self.repair("non_finite_number", f"read {word}", path)
            return (math.nan if word.lower() == "nan" else math.inf), j
        if (word[:1] in "rRbBuU" and len(word) <= 2) and j < self.end and self.text[j] in "\"'":
            if self.flavor != "python":
                self.repair("string_prefix", f"ignored string prefix {word}", path)
            return self.string(j, path, raw="r" in word.lower())
        raise _Fail(f"unexpected word {word!r}", i)

    def number(self, i: int, path: str) -> tuple[Any, int]:
        m = _NUMBER.match(self.text, i, self.end)
        if not m or not any(ch.isdigit() for ch in m.group()):
            m2 = _IDENT.match(self.text, i + 1, self.end) if self.text[i] in "+-" else None
            if m2 and m2.group() in ("Infinity", "inf"):
                if self.flavor == "json":
                    self.repair("non_finite_number", f"read {m2.group()}", path)
                return (-math.inf if self.text[i] == "-" else math.inf), m2.end()
            raise _Fail(f"unexpected character {self.text[i]!r}", i)
        raw = m.group()
        body = raw.lstrip("+-")
        if self.flavor == "json" and (raw.startswith("+") or "_" in raw or body.startswith(("0x", "0X"))):
            self.repair("number_format", f"read number {raw}", path)
        clean = raw.replace("_", "")
        try:
            if body[:2].lower() == "0x":
                value: Any = int(clean, 16)
            elif any(ch in clean for ch in ".eE"):
                if self.flavor == "json" and (clean.endswith(".") or clean.startswith((".", "-.", "+."))):
                    self.repair("number_format", f"read number {raw}", path)
                value = float(clean.rstrip(".") or "0") if not clean.endswith("e") else float(clean[:-1])
            else:
                value = int(clean)
        except ValueError:
            raise _Fail(f"invalid number {raw!r}", i) from None
        return value, m.end()

    def string(self, i: int, path: str, raw: bool = False) -> tuple[str, int]:
        text, end, flavor = self.text, self.end, self.flavor
        q = text[i]
        if q == "'" and flavor == "json":
            self.repair("single_quotes", "read a single-quoted string", path)
        elif q == "`" and flavor != "js":
            self.repair("backtick_string", "read a backtick string", path)
        triple = flavor == "python" and text.startswith(q * 3, i)
        close = q * 3 if triple else q
        i += len(close)
        parts: list[str] = []
        start = i
        while True:
            if i >= end:
                parts.append(text[start:end])
                self.repair("unterminated_string", "closed a string cut off by the end of the text", path)
                return "".join(parts), end
            c = text[i]
            if c == "\\" and not raw:
                parts.append(text[start:i])
                s, i = self.escape(i, path)
                parts.append(s)
                start = i
                continue
            if c == q and (not triple or text.startswith(close, i)):
                parts.append(text[start:i])
                return "".join(parts), i + len(close)
            if c == "\n" and not triple and q != "`":
                self.repair("raw_newline", "kept a raw newline inside a string", path)
            i += 1

    def escape(self, i: int, path: str) -> tuple[str, int]:
        text, end = self.text, self.end
        if i + 1 >= end:
            return "", end
        c = text[i + 1]
        if c in _ESCAPES:
            return _ESCAPES[c], i + 2
        if c == "u" and text.startswith("{", i + 2):  # JavaScript \u{1F600}
            j = text.find("}", i + 3, min(end, i + 12))
            if j > 0:
                try:
                    return chr(int(text[i + 3 : j], 16)), j + 1
                except ValueError:
                    pass
        if c in "uxU":
            n = {"u": 4, "x": 2, "U": 8}[c]
            digits = text[i + 2 : i + 2 + n]
            if len(digits) == n and all(d in "0123456789abcdefABCDEF" for d in digits):
                code = int(digits, 16)
                j = i + 2 + n
                if c == "u" and 0xD800 <= code < 0xDC00 and text.startswith("\\u", j):
                    low_digits = text[j + 2 : j + 6]
                    if len(low_digits) == 4 and all(d in "0123456789abcdefABCDEF" for d in low_digits):
                        low = int(low_digits, 16)
                        if 0xDC00 <= low < 0xE000:
                            return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), j + 6
                if c != "u" and self.flavor == "json":
                    self.repair("invalid_escape", f"read escape \\{c}", path)
                if 0xD800 <= code < 0xE000:  # lone surrogate: not encodable, keep the text
                    self.repair("invalid_escape", "kept a lone surrogate escape as text", path)
                    return text[i:j], j
                return chr(code), j
        if c in _EXTRA_ESCAPES:
            if self.flavor == "json" and c != "'":
                self.repair("invalid_escape", f"read escape \\{c!r}", path)
            elif c == "'" and self.flavor == "json":
                self.repair("single_quotes", "read an escaped single quote", path)
            return _EXTRA_ESCAPES[c], i + 2
        self.repair("invalid_escape", f"kept unknown escape \\{c}", path)
        return "\\" + c, i + 2

    def key(self, i: int, path: str) -> tuple[str, int]:
        c = self.text[i]
        if c in "\"'`":
            return self.string(i, path)
        m = _IDENT.match(self.text, i, self.end) or _NUMBER.match(self.text, i, self.end)
        if not m or m.end() == i:
            raise _Fail(f"expected an object key, found {c!r}", i)
        if self.flavor != "js":
            self.repair("unquoted_key", f"quoted key {m.group()}", path)
        return m.group(), m.end()

    def obj(self, i: int, path: str, depth: int) -> tuple[dict[str, Any], int]:
        if depth > MAX_DEPTH:
            raise _Fail("nesting too deep", i)
        text, end = self.text, self.end
        out: dict[str, Any] = {}
        i += 1
        first = True
        while True:
            i = self.ws(i)
            if i >= end:
                self.repair("unbalanced_brackets", "closed an object cut off by the end of the text", path)
                return out, end
            c = text[i]
            if c == "}":
                return out, i + 1
            if c in ")]":
                self.repair("unbalanced_brackets", f"closed an object at {c!r}", path)
                return out, i
            if not first:
                if c == ",":
                    i = self.ws(i + 1)
                    if i < end and text[i] == "}":
                        if self.flavor == "json":
                            self.repair("trailing_comma", "removed a trailing comma", path)
                        return out, i + 1
                    if i >= end:
                        continue
                else:
                    self.repair("missing_comma", "inserted a missing comma", path)
            first = False
            k, i = self.key(i, path)
            i = self.ws(i)
            if i >= end:
                self.repair("unbalanced_brackets", "dropped a key cut off by the end of the text", path)
                return out, end
            if text[i] == ":" or (text[i] == "=" and self.flavor != "json"):
                i += 1
            else:
                raise _Fail(f"expected ':' after key {k!r}", i)
            sub = f"{path}.{k}"
            i = self.ws(i)
            if i >= end:
                self.repair("unbalanced_brackets", "dropped a key cut off by the end of the text", path)
                return out, end
            out[k], i = self.value(i, sub, depth)

    def arr(self, i: int, path: str, depth: int) -> tuple[list[Any], int]:
        if depth > MAX_DEPTH:
            raise _Fail("nesting too deep", i)
        text, end = self.text, self.end
        close = "]" if text[i] == "[" else ")"
        out: list[Any] = []
        i += 1
        first = True
        while True:
            i = self.ws(i)
            if i >= end:
                self.repair("unbalanced_brackets", "closed an array cut off by the end of the text", path)
                return out, end
            c = text[i]
            if c == close:
                return out, i + 1
            if c in ")]}":
                self.repair("unbalanced_brackets", f"closed an array at {c!r}", path)
                return out, i
            if not first:
                if c == ",":
                    i = self.ws(i + 1)
                    if i < end and text[i] == close:
                        if self.flavor == "json":
                            self.repair("trailing_comma", "removed a trailing comma", path)
                        return out, i + 1
                    if i >= end:
                        continue
                else:
                    self.repair("missing_comma", "inserted a missing comma", path)
            first = False
            v, i = self.value(i, f"{path}[{len(out)}]", depth)
            out.append(v)


_FAST_STARTS = frozenset('{["-0123456789tfn')
_DECODER = json.JSONDecoder(parse_constant=_refuse)


def _fast(text: str, start: int, stop: int) -> LooseValue | None:
    """Strict JSON through the C decoder; None when the text needs the lenient parser."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    if end > stop:
        return None
    return LooseValue(value, end)


def parse_value(text: str, start: int = 0, end: int | None = None, *, flavor: Flavor = "json") -> LooseValue:
    """Parse one value starting at `start` (leading whitespace allowed); never raises.

    Args:
        text: The text holding the value.
        start: Where to start reading.
        end: Where the text ends for this parse (defaults to its length).
        flavor: Which literal syntax is native (see the module docstring).
    """
    stop = len(text) if end is None else end
    start = skip_ws(text, start, stop)
    if flavor == "json" and text[start : start + 1] in _FAST_STARTS:
        fast = _fast(text, start, stop)
        if fast is not None:
            return fast
    p = _Parser(text, stop, flavor)
    try:
        value, i = p.value(start, "$", 0)
    except _Fail as e:
        return LooseValue(None, e.pos, p.repairs, e.message, e.pos)
    except RecursionError:
        return LooseValue(None, start, p.repairs, "nesting too deep", start)
    return LooseValue(value, i, p.repairs)


def loads(text: str, *, flavor: Flavor = "json", strip_extra: bool = True) -> LooseValue:
    """Parse `text` as one value; text after the value is an error unless `strip_extra` (then a repair).

    Code fences and prose around a JSON payload are removed (and recorded) before parsing.
    """
    end = len(text)
    i = skip_ws(text, 0)
    repairs: list[Repair] = []
    if text.startswith("```", i):
        nl = text.find("\n", i)
        close = text.rfind("```")
        if nl >= 0:
            repairs.append(Repair(kind="code_fence", message="removed a code fence around the payload"))
            i = nl + 1
            if close > i:
                end = close
    if i < end and text[i] not in "{[\"'`-0123456789tfnTFNu(" and strip_extra:
        j = min((k for k in (text.find("{", i, end), text.find("[", i, end)) if k >= 0), default=-1)
        if j >= 0:
            repairs.append(Repair(kind="stray_text", message="ignored text before the payload"))
            i = j
    result = parse_value(text, i, end, flavor=flavor)
    result.repairs[:0] = repairs
    if result.ok:
        j = skip_ws(text, result.end, end)
        if j < end:
            if not strip_extra:
                result.error, result.error_pos = "unexpected text after the value", j
            else:
                result.repairs.append(Repair(kind="stray_text", message="ignored text after the payload"))
    return result
