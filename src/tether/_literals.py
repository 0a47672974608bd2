"""A lenient, linear-time parser for JSON and its relatives (JavaScript and Python literals).

One recursive-descent parser serves three flavours:

- `json`: strict JSON is accepted as is; everything else it tolerates is recorded as a `Repair`
  (trailing commas, single quotes, unquoted keys, raw newlines in strings, Python literals, comments,
  missing commas, unbalanced brackets at the end of the text, and what models get wrong inside a
  container: unescaped inner quotes, unquoted values such as `New York` or `2024-01-15`, tuples, sets,
  `...` in arrays, smart quotes, `key: value` pairs missing their braces).
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from tether.types import Repair

__all__ = [
    "MAX_DEPTH",
    "Flavor",
    "LooseValue",
    "loads",
    "parse_value",
    "skip_ws",
    "strict_object",
    "strict_value_at",
]

Flavor = Literal["json", "js", "python"]

MAX_DEPTH = 256
"""Deepest nesting of objects and arrays accepted before the text is refused."""

_NUMBER = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_WS = re.compile(r"\s*")
_UNQUOTED_END = re.compile(r'[,}\])"\n]|```')
_BARE_KEY = re.compile(r"[\w$.+-]+")
_TOKEN_END = re.compile(r'[\s,}\])"]')
_STOPS = {q: re.compile("[\\\\\n\u201e\u201c" + re.escape(q) + "]") for q in "\"'`\u201d"}
_CLOSER = {"{": "}", "[": "]", "(": ")"}
# What may follow the closing quote of a string, by where the string sits.
_FOLLOWERS = {"obj": "}", "key": ":,}", "arr": ",]:", "tuple": ",)", "set": ",}"}
_LITERALS = {"true": True, "false": False, "null": None}
Context = Literal["top", "obj", "key", "arr", "tuple", "set"]
"""Where a value sits: repairs that guess at structure apply only inside a container."""
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
    __slots__ = ("end", "flavor", "kinds", "repairs", "stack", "text")

    def __init__(self, text: str, end: int, flavor: Flavor):
        self.text = text
        self.end = end
        self.flavor = flavor
        self.repairs: list[Repair] = []
        self.kinds: set[tuple[str, str | None]] = set()
        self.stack: list[str] = []  # the open brackets, for closers cut into an unterminated string

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

    def value(self, i: int, path: str, depth: int, ctx: Context = "top") -> tuple[Any, int]:
        i = self.ws(i)
        if i >= self.end:
            raise _Fail("expected a value, found the end of the text", i)
        c = self.text[i]
        if c == "{":
            return self.obj(i, path, depth + 1)
        if c == "[" or (c == "(" and self.flavor != "js"):
            if c == "(" and self.flavor == "json":
                self.repair("python_literal", "read a tuple as an array", path)
            return self.arr(i, path, depth + 1)
        if c in "\"'`" or (c == "\u201c" and self.flavor == "json"):
            return self.string(i, path, ctx)
        if c in "-+.0123456789":
            return self.number(i, path, ctx)
        m = _IDENT.match(self.text, i, self.end)
        if m:
            return self.word(m.group(), i, m.end(), path, ctx)
        raise _Fail(f"unexpected character {c!r}", i)

    def word(self, word: str, i: int, j: int, path: str, ctx: Context = "top") -> tuple[Any, int]:
        if word in _LITERALS:
            return _LITERALS[word], j
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
            return self.string(j, path, ctx, raw="r" in word.lower())
        if self.flavor == "json":
            lower = word.lower()
            if lower in _LITERALS:
                self.repair("literal_case", f"read {word} as {lower}", path)
                return _LITERALS[lower], j
            if j == self.end and any(lit.startswith(word) for lit in _LITERALS):
                self.repair("unbalanced_brackets", f"completed {word!r} cut off by the end of the text", path)
                return next(v for lit, v in _LITERALS.items() if lit.startswith(word)), j
            if ctx != "top":
                return self.unquoted(i, path)
        raise _Fail(f"unexpected word {word!r}", i)

    def unquoted(self, i: int, path: str) -> tuple[str, int]:
        """A value missing its quotes (`New York`, `value`): the text up to the next delimiter."""
        m = _UNQUOTED_END.search(self.text, i, self.end)
        j = m.start() if m else self.end
        self.repair("unquoted_string", "quoted a value missing its quotes", path)
        return self.text[i:j].rstrip(), j

    def number(self, i: int, path: str, ctx: Context = "top") -> tuple[Any, int]:
        m = _NUMBER.match(self.text, i, self.end)
        if not m or not any(ch.isdigit() for ch in m.group()):
            m2 = _IDENT.match(self.text, i + 1, self.end) if self.text[i] in "+-" else None
            if m2 and m2.group() in ("Infinity", "inf"):
                if self.flavor == "json":
                    self.repair("non_finite_number", f"read {m2.group()}", path)
                return (-math.inf if self.text[i] == "-" else math.inf), m2.end()
            raise _Fail(f"unexpected character {self.text[i]!r}", i)
        raw = m.group()
        k = m.end()
        if self.flavor == "json" and ctx != "top" and k < self.end:
            nxt, after = self.text[k], self.text[k + 1 : k + 2]
            if nxt in "eE" and (not after or after in " \t\r\n,}])"):
                self.repair("number_format", f"dropped a dangling exponent after {raw}", path)
                return self.number(i, path)[0], k + 1
            if (nxt.isalnum() or nxt in "-.:_+/") and not (nxt == "/" and after in ("/", "*")):
                t = _TOKEN_END.search(self.text, k, self.end)  # 2024-01-15, 1/3, 57eeeeb1-450b-...
                j = t.start() if t else self.end
                self.repair("unquoted_string", f"quoted {self.text[i:j]!r}", path)
                return self.text[i:j], j
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

    def string(self, i: int, path: str, ctx: Context = "top", raw: bool = False) -> tuple[str, int]:
        text, end, flavor = self.text, self.end, self.flavor
        q = text[i]
        if q == "'" and flavor == "json":
            self.repair("single_quotes", "read a single-quoted string", path)
        elif q == "`" and flavor != "js":
            self.repair("backtick_string", "read a backtick string", path)
        elif q == "\u201c":
            self.repair("smart_quotes", "read a string in typographic quotes", path)
            q = "\u201d"
        triple = flavor == "python" and text.startswith(q * 3, i)
        close = q * 3 if triple else q
        i += len(close)
        # Inside a container, a JSON string's quote that no delimiter follows is taken for an unescaped
        # inner quote (`"<a href="x">"`), as models forget to escape them.
        lenient = flavor == "json" and ctx != "top" and q in "\"'"
        stops = _STOPS[q]
        parts: list[str] = []
        start = i
        inner = 0  # inner quotes seen: an odd count means one is open
        prev_q = -1  # the last inner quote
        comma_q = -1  # the first inner quote followed by a comma: where a string cut short may have ended
        while True:
            m = stops.search(text, i, end)
            if m is None:
                return self.unterminated(parts, start, path, lenient)
            i = m.start()
            c = text[i]
            if c == "\\":
                if raw:
                    i += 1
                    continue
                parts.append(text[start:i])
                s, i = self.escape(i, path)
                parts.append(s)
                start = i
                continue
            if c == "\n":
                if not triple and q != "`":
                    self.repair("raw_newline", "kept a raw newline inside a string", path)
                i += 1
                continue
            if c != q:  # an opening typographic quote: its closing one is an inner quote
                inner += 1 if lenient else 0
                i += 1
                continue
            if triple and not text.startswith(close, i):
                i += 1
                continue
            if lenient:
                verdict = self.quote_verdict(i, q, ctx, inner, empty=not parts and i == start)
                if verdict == "doubled":
                    self.repair("doubled_quote", "dropped a doubled opening quote", path)
                    i = start = i + 1
                    continue
                if verdict == "key" and prev_q >= start:
                    self.repair("missing_quote", "closed a string before the next key", path)
                    cut = comma_q if comma_q >= start else prev_q
                    parts.append(text[start:cut])
                    return "".join(parts).rstrip().rstrip(",").rstrip(), cut
                if verdict != "close":
                    self.repair("unescaped_quote", "kept an unescaped quote inside a string", path)
                    inner += 1
                    prev_q = i
                    if comma_q < 0 and text[skip_ws(text, i + 1, end) : skip_ws(text, i + 1, end) + 1] == ",":
                        comma_q = i
                    i += 1
                    continue
            parts.append(text[start:i])
            return "".join(parts), i + len(close)

    def quote_verdict(self, i: int, q: str, ctx: Context, inner: int, empty: bool) -> str:
        """Whether the quote at `i` closes its string: "close", "inner", "doubled" or "key"."""
        text, end = self.text, self.end
        j = skip_ws(text, i + 1, end)
        if j >= end:
            return "close"
        n = text[j]
        if n in _FOLLOWERS[ctx] or text.startswith(("```", "//", "/*"), j):
            return "close"
        if n in "])}":  # a mismatched closer, if a delimiter follows it: `a["k"]` stays in the string
            k = skip_ws(text, j + 1, end)
            if k >= end or text[k] in ",}])":
                return "close"
        if n == "," and ctx == "obj":  # closes if a key follows: "a, b" stays one string
            k = skip_ws(text, j + 1, end)
            if k >= end or text[k] in "\"'}":
                return "close"
            m = _BARE_KEY.match(text, k, end)
            if m and text[skip_ws(text, m.end(), end) : skip_ws(text, m.end(), end) + 1] == ":":
                return "close"
        if n == q:  # a missing comma before the next key: "a" "b": 1
            k = text.find(q, j + 1, end)
            if k >= 0 and text[skip_ws(text, k + 1, end) : skip_ws(text, k + 1, end) + 1] == ":":
                return "close"
        if n == ":" and ctx == "obj":
            return "key"
        if empty:
            return "doubled"
        if j == i + 1 or inner % 2:
            return "inner"
        return "close"

    def unterminated(self, parts: list[str], start: int, path: str, lenient: bool) -> tuple[str, int]:
        """A string cut off by the end of the text; closing brackets typed inside it close their containers."""
        text, end = self.text, self.end
        self.repair("unterminated_string", "closed a string cut off by the end of the text", path)
        cut = end
        if lenient and self.stack:
            j = end
            while j > start and (text[j - 1].isspace() or text[j - 1] == "`"):
                j -= 1
            closers: list[int] = []
            while j > start and text[j - 1] in "}])" and len(closers) < len(self.stack):
                j -= 1
                closers.append(j)
                while j > start and text[j - 1].isspace():
                    j -= 1
            wanted = [_CLOSER[b] for b in reversed(self.stack)][: len(closers)]
            if closers and [text[k] for k in reversed(closers)] == wanted:
                cut = closers[-1]
        parts.append(text[start:cut])
        value = "".join(parts)
        return (value.rstrip() if cut < end else value), cut

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

    def key(self, i: int, path: str) -> tuple[str, int, str]:
        """An object key, and how it was written: "quoted", "word" or "number"."""
        c = self.text[i]
        if c in "\"'`" or (c == "\u201c" and self.flavor == "json"):
            return (*self.string(i, path, "key"), "quoted")
        m = _IDENT.match(self.text, i, self.end)
        kind = "word"
        if not m:
            m, kind = _NUMBER.match(self.text, i, self.end), "number"
        if not m or m.end() == i:
            raise _Fail(f"expected an object key, found {c!r}", i)
        return m.group(), m.end(), kind

    def stray_quote(self, i: int, after: int) -> bool:
        """Whether the quote at `i`, just after a value, is a stray one (`"a": abc", `) to skip."""
        if self.flavor != "json" or i != after or self.text[i] not in "\"'":
            return False
        j = skip_ws(self.text, i + 1, self.end)
        return j >= self.end or self.text[j] in ",}])"

    def obj(self, i: int, path: str, depth: int) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise _Fail("nesting too deep", i)
        self.stack.append("{")
        out, j = self.members({}, i + 1, path, depth, open_at=i)
        self.stack.pop()
        return out, j

    def members(
        self, out: dict[str, Any], i: int, path: str, depth: int, *, open_at: int = -1, first: bool = True
    ) -> tuple[Any, int]:
        """The `key: value` pairs of an object up to its `}`; `open_at` < 0 for one missing its braces."""
        text, end, lenient = self.text, self.end, self.flavor == "json"
        while True:
            after = i
            i = self.ws(i)
            if i >= end or (lenient and text.startswith("```", i)):
                self.repair("unbalanced_brackets", "closed an object cut off by the end of the text", path)
                return out, i
            c = text[i]
            if c == "}":
                return out, i + 1
            if c in ")]":
                if open_at >= 0:
                    self.repair("unbalanced_brackets", f"closed an object at {c!r}", path)
                return out, i
            if not first:
                if c == ",":
                    i = self.ws(i + 1)
                    if i < end and text[i] == "}":
                        if lenient:
                            self.repair("trailing_comma", "removed a trailing comma", path)
                        return out, i + 1
                    if i >= end:
                        continue
                elif self.stray_quote(i, after):
                    self.repair("stray_quote", "dropped a stray quote after a value", path)
                    i += 1
                    continue
                else:
                    self.repair("missing_comma", "inserted a missing comma", path)
            first = False
            key_at = i
            k, i, kind = self.key(i, path)
            i = self.ws(i)
            if i >= end:
                self.repair("unbalanced_brackets", "dropped a key cut off by the end of the text", path)
                return out, end
            if text[i] == ":" or (text[i] == "=" and not lenient):
                if kind != "quoted" and self.flavor != "js":
                    self.repair("unquoted_key", f"quoted key {k}", path)
                i += 1
            elif lenient and kind == "word" and (out or text[i] in "\"'"):  # `{"a": 1, NOTE "b": 2}`
                self.repair("stray_text", f"dropped {k!r} inside an object", path)
                first = True
                continue
            elif kind != "word" and not out and key_at == skip_ws(text, open_at + 1) and text[i] in ",}":
                # a set literal {'a', 'b'}: read it as an array
                if self.flavor != "python":
                    self.repair("python_literal", "read a set as an array", path)
                return self.arr(open_at, path, depth)
            else:
                raise _Fail(f"expected ':' after key {k!r}", i)
            sub = f"{path}.{k}"
            i = self.ws(i)
            if i >= end:
                self.repair("unbalanced_brackets", "dropped a key cut off by the end of the text", path)
                return out, end
            out[k], i = self.value(i, sub, depth, "obj")

    def arr(self, i: int, path: str, depth: int) -> tuple[Any, int]:
        if depth > MAX_DEPTH:
            raise _Fail("nesting too deep", i)
        text, end, lenient = self.text, self.end, self.flavor == "json"
        opener = text[i]
        close = _CLOSER[opener]
        self.stack.append(opener)
        ctx: Context = "arr" if opener == "[" else "tuple" if opener == "(" else "set"
        out: list[Any] = []
        i += 1
        first = True
        commas = 0
        while True:
            after = i
            i = self.ws(i)
            if i >= end or (lenient and text.startswith("```", i)):
                self.repair("unbalanced_brackets", "closed an array cut off by the end of the text", path)
                break
            c = text[i]
            if c == close:
                i += 1
                break
            if c in ")]}":
                self.repair("unbalanced_brackets", f"closed an array at {c!r}", path)
                break
            if not first:
                if c == ",":
                    commas += 1
                    i = self.ws(i + 1)
                    if i < end and text[i] == close:
                        if lenient and close != ")":
                            self.repair("trailing_comma", "removed a trailing comma", path)
                        i += 1
                        break
                    if i >= end:
                        continue
                elif self.stray_quote(i, after):
                    self.repair("stray_quote", "dropped a stray quote after a value", path)
                    i += 1
                    continue
                else:
                    self.repair("missing_comma", "inserted a missing comma", path)
            if lenient and text.startswith("...", i):  # [1, 2, ...]: the model elided items
                self.repair("ellipsis", "dropped '...' from an array", path)
                i = self.ws(i + 3)
                if i < end and text[i] == ",":
                    i += 1
                first = True
                continue
            first = False
            sub = f"{path}[{len(out)}]"
            v, i = self.value(i, sub, depth, ctx)
            j = self.ws(i)
            if lenient and isinstance(v, str) and j < end and text[j] == ":":  # ["key": "value"]
                self.repair("missing_braces", "read key: value pairs in an array as an object", sub)
                pair: dict[str, Any] = {}
                pair[v], i = self.value(j + 1, f"{sub}.{v}", depth + 1, "obj")
                v, i = self.members(pair, i, sub, depth + 1, first=False)
            out.append(v)
        self.stack.pop()
        if opener == "(" and len(out) == 1 and not commas:  # (x) is x; (x,) is a tuple
            return out[0], i
        return out, i


_FAST_STARTS = frozenset('{["-0123456789tfn')
_DECODER = json.JSONDecoder(parse_constant=_refuse)
_SCAN = cast("Callable[[str, int], tuple[Any, int]]", _DECODER.scan_once)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
_JSON_SPACE = " \t\n\r"


def strict_object(text: str) -> dict[str, Any] | None:
    """`text` as a JSON object when it is exactly one in strict JSON (read at C speed), else None: then
    `loads` reads it, repairing what it must. What models and providers usually send takes this path."""
    try:
        if text[:1] == "{":  # the usual case: the C scanner alone (`decode` adds two regex matches)
            value, end = _SCAN(text, 0)
            if end != len(text) and text[end:].strip(_JSON_SPACE):
                return None  # more after the object
        else:
            value = _DECODER.decode(text)
    except (ValueError, RecursionError, StopIteration):
        return None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def strict_value_at(text: str, start: int) -> tuple[Any, int] | None:
    """The value in strict JSON beginning exactly at `start` (no blanks before it) and where it ends, read at C
    speed; None when none begins there (the lenient parser may still read one)."""
    try:
        return _SCAN(text, start)
    except (ValueError, RecursionError, StopIteration):
        return None


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


_FENCE = re.compile(r"`{3,}(?:[\w+.-]+(?=\s))?")
_PAYLOAD_STARTS = "{[\"'`-0123456789tfnTFNu("


def _fence(text: str, at: int, end: int, *, last: bool) -> tuple[int, int]:
    """The span inside the code fence opening at `at` (to its closing fence, or the end of the text)."""
    m = _FENCE.match(text, at, end)
    start = m.end() if m else at + 3
    close = text.rfind("```", start, end) if last else text.find("```", start, end)
    return start, close if close >= 0 else end


def _load_span(
    text: str, i: int, end: int, flavor: Flavor, strip_extra: bool, repairs: list[Repair]
) -> tuple[LooseValue, bool]:
    """Parse the payload of `text[i:end]`; also says whether text around it was ignored."""
    i = skip_ws(text, i, end)
    ignored = False
    if i < end and text[i] not in _PAYLOAD_STARTS and strip_extra:
        j = min((k for k in (text.find("{", i, end), text.find("[", i, end)) if k >= 0), default=-1)
        if j >= 0:
            repairs.append(Repair(kind="stray_text", message="ignored text before the payload"))
            ignored = True
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
                ignored = True
    return result, ignored


def loads(text: str, *, flavor: Flavor = "json", strip_extra: bool = True) -> LooseValue:
    """Parse `text` as one value; text after the value is an error unless `strip_extra` (then a repair).

    Code fences and prose around a JSON payload are removed (and recorded) before parsing: a payload in a
    fence after prose (`Here it is: ```json ...```) is preferred to a value read out of the prose.
    """
    end = len(text)
    i = skip_ws(text, 0)
    fence = Repair(kind="code_fence", message="removed a code fence around the payload")
    if text.startswith("```", i):
        start, stop = _fence(text, i, end, last=True)
        return _load_span(text, start, stop, flavor, strip_extra, [fence])[0]
    result, ignored = _load_span(text, i, end, flavor, strip_extra, [])
    if strip_extra and (ignored or not result.ok):
        f = text.find("```", i, end)
        if f >= 0:
            start, stop = _fence(text, f, end, last=False)
            prose = Repair(kind="stray_text", message="ignored text around a fenced payload")
            fenced, _ = _load_span(text, start, stop, flavor, strip_extra, [prose, fence])
            if fenced.ok:
                return fenced
        if not result.ok and i < end and text[i] not in "{[":  # `- {"a": 1}`: prose that looked like a value
            j = min((k for k in (text.find("{", i, end), text.find("[", i, end)) if k >= 0), default=-1)
            if j > i:
                prose = Repair(kind="stray_text", message="ignored text before the payload")
                retry, _ = _load_span(text, j, end, flavor, strip_extra, [prose])
                if retry.ok:
                    return retry
    return result
