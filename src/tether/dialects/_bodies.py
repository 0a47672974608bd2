"""Body formats: how the text inside a call region reads as calls, declared as data on an `Opener`.

A text dialect is its openers: `Opener("<tool_call>", ends=("</tool_call>",), body=JsonCalls())`. A body format
records the calls of one region's text through an `Emitter`. The shared ones are here (JSON calls, Qwen3-Coder
XML functions, GLM `arg_key`/`arg_value` pairs, named-parameter `invoke` XML, Python call lists); a format
with its own syntax implements `Body` (one method, `read`) in its dialect's module, and may stream calls before
its region ends by also giving `stream` (see `BodyStream`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol, cast

from tether._literals import parse_value, skip_ws
from tether._syntax import parse_call_list
from tether.dialects._calls import JsonAnnouncer, emit_json_calls
from tether.dialects._emitter import Emitter
from tether.dialects._events import PartialCall
from tether.dialects._tools import bind_arguments, coerce_text_value
from tether.dialects._xmlargs import typed_arguments
from tether.types import Repair

__all__ = [
    "ArgPairs",
    "Body",
    "BodyStream",
    "JsonCalls",
    "PythonCalls",
    "XmlFunctions",
    "XmlInvoke",
    "arg_pairs",
]


class Body(Protocol):
    """How the text of a call region reads as calls (a dialect with an odd format implements this)."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        """Record the calls (and failures) of one region through `out`.

        Args:
            out: Where calls, failures and any text go.
            text: The region's body, without its markers (with them for a `balanced` opener).
            span: Where the region lies in the output (its markers included).
            complete: Whether the region's end marker came (False: the output ended inside it).
        """
        ...


class BodyStream(Protocol):
    """One region's calls read while it streams.

    A body that reads calls before its region ends has a method `stream(out, start, at, keep)` returning one
    (or None, to read the region whole): `start` is where the region begins, `at` where its body begins,
    `keep` how many characters at the end of what has arrived may still begin the region's end marker.
    """

    def progress(self, chunk: str) -> None:
        """More of the region's body arrived (announce calls, stream argument fragments)."""
        ...

    def end(self, text: str, span: tuple[int, int], complete: bool) -> None:
        """The region ended: record what is left of its calls (as `Body.read` would, less what was read)."""
        ...

    def partial(self) -> PartialCall | None:
        """The call being streamed, with its arguments so far (None if none has been announced)."""
        ...


# A body stream whose class sets `reads_whole = True` may get `end` with no `progress` before it when its
# region's body arrived whole with the end marker (a whole output, or a large chunk): it must then record the
# same calls and events (argument fragments joined) as `progress(text)` followed by `end` would, and may read
# the body once instead of twice.


# --------------------------------------------------------------------------------------------- JSON


@dataclass(frozen=True, slots=True)
class JsonCalls:
    """JSON calls: `{"name", "arguments"}` (or `parameters`, `{"function": {...}}`, ...), or a list of them.

    Attributes:
        several: The body may hold several JSON values in a row (one per line, or `,`/`;`-separated).
        single_key: `{"tool_name": {...args}}` is read too.
        fenced: The body may begin with a code fence's `json` language tag.
        announce: Announce the call while its region streams and stream its arguments as fragments.
    """

    several: bool = False
    single_key: bool = False
    fenced: bool = False
    announce: bool = False

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        self._read(out, text, span, complete, None)

    def stream(self, out: Emitter, start: int, at: int, keep: int) -> BodyStream | None:
        return _AnnouncedJson(self, out, keep) if self.announce else None

    def _read(
        self, out: Emitter, text: str, span: tuple[int, int], complete: bool, announced: str | None
    ) -> None:
        if self.fenced and text.startswith("json"):
            text = text[4:]
        if not self.several:
            emit_json_calls(out, text, span, complete, single_key=self.single_key, announced=announced)
            return
        i, found = skip_ws(text, 0), False
        while i < len(text):
            if text[i] in ",;":
                i = skip_ws(text, i + 1)
                continue
            v = parse_value(text, i)
            if not v.ok:
                if not found:
                    emit_json_calls(
                        out, text[i:], span, complete, single_key=self.single_key, announced=announced
                    )
                else:
                    out.text(text[i:])
                return
            emit_json_calls(
                out, text[i : v.end], span, complete, single_key=self.single_key, announced=announced
            )
            announced, found = None, True
            i = skip_ws(text, v.end)
            if text.startswith("</s>", i):
                return


class _AnnouncedJson:
    __slots__ = ("announcer", "body", "progress")

    reads_whole = True
    """See `BodyStream`: a body that arrives whole is read by one decode (`JsonAnnouncer.whole`)."""

    def __init__(self, body: JsonCalls, out: Emitter, keep: int):
        self.body = body
        self.announcer = JsonAnnouncer(out, keep)
        self.progress = self.announcer.progress
        """More of the region's body (the announcer's own method: it runs on every delta of a streamed call)."""

    def end(self, text: str, span: tuple[int, int], complete: bool) -> None:
        announcer, body = self.announcer, self.body
        # the usual body (strict `{"name", "arguments"}`) is read once, here; any other by the general path
        plain = complete and not (body.several or body.single_key or body.fenced)
        if announcer.fresh and text:
            if plain and announcer.whole(text, span):
                return
            announcer.progress(text)  # what streaming it whole would have done
        elif plain and announcer.finish_call(text, span):
            return
        announced = announcer.finish(text)
        body._read(announcer.out, text, span, complete, announced)  # pyright: ignore[reportPrivateUsage]

    def partial(self) -> PartialCall | None:
        return self.announcer.partial()


# ---------------------------------------------------------------------------------------------- XML

_FUNCTION = re.compile(r"<function=([^>\n]+)>")
_PARAM_END = re.compile(r"</parameter>|(?=<parameter=)|(?=</function>)")


@dataclass(frozen=True, slots=True)
class XmlFunctions:
    """Qwen3-Coder XML: `<function=f><parameter=p>value</parameter></function>`, values typed by the schema.

    Attributes:
        value_lines: Each value sits on lines of its own (`<parameter=p>\\nvalue\\n</parameter>`): the one
            newline the format adds on each side is not part of the value, any other whitespace is. Without
            it the value is everything between the tags.
        bare: The region is one `<function=...>` element (its opener is `<function=`, its end `</function>`).
    """

    value_lines: bool = True
    bare: bool = False

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        if self.bare:
            text = "<function=" + text + "</function>"
        matches = list(_FUNCTION.finditer(text))
        for n, m in enumerate(matches):
            name = m.group(1).strip()
            limit = matches[n + 1].start() if n + 1 < len(matches) else len(text)
            end = text.find("</function>", m.end(), limit)
            inner = text[m.end() : end if end >= 0 else limit]
            args, repairs = typed_arguments(out.tools, name, self._pairs(inner))
            if end < 0 or not complete:
                repairs.append(Repair(kind="unterminated", message="the call's closing tag is missing"))
            out.call(name, args, span, repairs)
        if not matches:
            out.fail("no <function=...> in the tool call", span, text)

    def _pairs(self, inner: str) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        i = 0
        while True:
            j = inner.find("<parameter=", i)
            if j < 0:
                return pairs
            k = inner.find(">", j)
            if k < 0:
                return pairs
            key = inner[j + 11 : k].strip()
            close = _PARAM_END.search(inner, k + 1)
            stop = close.start() if close else len(inner)
            value = inner[k + 1 : stop]
            if self.value_lines:
                value = value.removeprefix("\n").removesuffix("\n")
            pairs.append((key, value))
            i = close.end() if close and close.end() > stop else stop


_NAME = re.compile(r"[A-Za-z_][\w.\-:]*")


def arg_pairs(body: str, i: int) -> list[tuple[str, str]]:
    """`<arg_key>k</arg_key><arg_value>v</arg_value>` pairs, each bounded by the next key (linear)."""
    out: list[tuple[str, str]] = []
    starts: list[int] = []
    j = body.find("<arg_key>", i)
    while j >= 0:
        starts.append(j)
        j = body.find("<arg_key>", j + 9)
    for n, j in enumerate(starts):
        limit = starts[n + 1] if n + 1 < len(starts) else len(body)
        k = body.find("</arg_key>", j + 9, limit)
        if k < 0:
            continue
        v = body.find("<arg_value>", k + 10, limit)
        if v < 0:
            continue
        e = body.find("</arg_value>", v + 11, limit)
        out.append((body[j + 9 : k].strip(), body[v + 11 : e if e >= 0 else limit]))
    return out


@dataclass(frozen=True, slots=True)
class ArgPairs:
    """GLM: `name<arg_key>k</arg_key><arg_value>v</arg_value>...`, values typed by the tool's schema."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        k = text.find("<arg_key>")
        name = (text if k < 0 else text[:k]).strip()
        if not _NAME.fullmatch(name):
            out.fail("a tool call needs a function name", span, text)
            return
        args, repairs = typed_arguments(out.tools, name, arg_pairs(text, max(k, 0)))
        if not complete:
            repairs.append(Repair(kind="unterminated", message="the call's closing tag is missing"))
        out.call(name, args, span, repairs)


@dataclass(frozen=True, slots=True)
class XmlInvoke:
    """Named-parameter XML: `<P invoke name="f"><P parameter name="k">v</P parameter></P invoke>` for a family's
    spelling of the tags (`<steptml:invoke`, DSML's `invoke`, ...). A value marked `string="true"` is
    text, `string="false"` JSON; others are typed by the tool's schema. An invoke may hold a JSON object instead.

    Attributes:
        invoke, param: The elements' start tags, up to their attributes (`<steptml:invoke`).
        invoke_end, param_end: Their end tags.
        bare: The region is one invoke element (its opener is `invoke`, its end `invoke_end`).
    """

    invoke: str
    param: str
    invoke_end: str
    param_end: str
    bare: bool = False

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        if self.bare:
            text = self.invoke + text + self.invoke_end
        pattern = re.compile(re.escape(self.invoke) + r'\s+name="([^"]+)"\s*(/?)>')
        matches = list(pattern.finditer(text))
        if not matches:
            out.fail("no invoke in the tool calls", span, text)
            return
        for n, m in enumerate(matches):
            limit = matches[n + 1].start() if n + 1 < len(matches) else len(text)
            end = text.find(self.invoke_end, m.end(), limit)
            inner = "" if m.group(2) else text[m.end() : end if end >= 0 else limit]
            self._invoke(out, m.group(1), inner, span, complete and (end >= 0 or bool(m.group(2))))

    def _invoke(self, out: Emitter, name: str, inner: str, span: tuple[int, int], complete: bool) -> None:
        repairs: list[Repair] = (
            [] if complete else [Repair(kind="unterminated", message="the call is cut off")]
        )
        if self.param not in inner and inner.strip():  # a JSON body instead of parameters
            v = parse_value(inner, skip_ws(inner, 0))
            value: Any = v.value
            if isinstance(value, dict):
                out.call(name, cast("dict[str, Any]", value), span, [*repairs, *v.repairs])
            else:
                out.fail(f"arguments of {name} are not an object", span, inner)
            return
        if re.search(re.escape(self.param) + r"\s*>", inner):
            out.fail(f"a parameter of {name} has no name", span, inner)
            return
        args: dict[str, Any] = {}
        param = re.compile(re.escape(self.param) + r'\s+name="([^"]+)"([^>]*)>')
        for m in param.finditer(inner):
            close = inner.find(self.param_end, m.end())
            raw = inner[m.end() : close if close >= 0 else len(inner)]
            key, attrs = m.group(1), m.group(2)
            if 'string="true"' in attrs:
                args[key] = raw
                continue
            schema = out.tools.param_schema(name, key)
            if 'string="false"' in attrs and schema is None:
                v = parse_value(raw, skip_ws(raw, 0))
                args[key] = v.value if v.ok else raw
                continue
            args[key], repair = coerce_text_value(raw, schema, f"$.{key}")
            if repair is not None:
                repairs.append(repair)
        out.call(name, args, span, repairs)


# ------------------------------------------------------------------------------------------- Python


@dataclass(frozen=True, slots=True)
class PythonCalls:
    """A Python call list, `[f(a=1), g("x")]` (or calls one per line): Python literals, JSON's `true`/`false`/
    `null` too, positional arguments bound to the tool's parameters in order.

    Attributes:
        speculative: The region was only guessed to be calls (an opener with a guard): if it is no call list
            it stays text, and each call's span is its own.
        or_json: The body may be JSON calls instead (`{...}` or `[{...}]`).
    """

    speculative: bool = False
    or_json: bool = False

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        if self.or_json and (text.lstrip()[:1] == "{" or text.lstrip().replace(" ", "")[:2] == "[{"):
            emit_json_calls(out, text, span, complete)
            return
        speculative = self.speculative
        calls, error, repairs = parse_call_list(text)
        if error or not calls or (speculative and any(c.error for c in calls) and len(calls) == 1):
            if speculative and not any(not c.error for c in calls):
                out.text(text)
                return
            if error or not calls:
                out.fail(error or "no call found", span, text)
                return
        extra: list[Repair] = list(repairs)
        if not complete and not extra:
            extra.append(Repair(kind="unterminated", message="the call list's end marker is missing"))
        for c in calls:
            cspan = (span[0] + c.start, span[0] + c.end) if speculative else span
            if c.error:
                out.fail(c.error, cspan, text[c.start : c.end + 1])
                continue
            args, bind_repairs, bind_error = bind_arguments(c, out.tools)
            if bind_error:
                out.fail(bind_error, cspan, text[c.start : c.end])
                continue
            out.call(c.name, args, cspan, [*extra, *c.repairs, *bind_repairs])
