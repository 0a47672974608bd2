"""Formats made of marked regions in free text: `Opener` describes a region, `RegionParser` finds them.

A text dialect describes its format as *openers*: markers that begin a region (a tool call, a block of
calls, or reasoning) and how the region ends (literal end markers, balanced brackets, or the end of the
text). `RegionParser` scans only new characters, holding back at most a bounded tail that could still
become a marker, so `feed` costs time proportional to the delta and content is emitted as soon as it can
no longer be part of a marker. `parse(text)` is `feed(text)` + `close()` on a fresh parser, so the result
of a stream equals the one-shot result for every split of the text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal, cast

from tether._syntax import Balancer
from tether.dialects._bodies import Body, BodyStream
from tether.dialects._events import ParseEvent, PartialCall, TextDelta
from tether.dialects._parser import StreamParser
from tether.dialects._tools import ToolIndex
from tether.exceptions import UserError

__all__ = ["THINK", "Opener", "RegionParser", "marker_pattern", "region_parser"]


_TO_END = "\x00"
"""`_Region.end` of a call region that runs to the end of the output."""


def _end(o: Opener) -> str | None:
    if o.kind != "call" or o.balanced:
        return None
    if len(o.ends) <= 1:
        return o.ends[0] if o.ends else _TO_END
    firsts = {e[0] for e in o.ends}
    return firsts.pop() if len(firsts) == 1 else None


@dataclass(frozen=True, slots=True)
class Opener:
    """How a region of the output begins and ends.

    Attributes:
        start: The literal marker that begins the region.
        body: For call regions: how the region's text reads as calls (a body format such as `JsonCalls()`,
            or the dialect's own `Body`). A parser subclass that overrides `on_region` may leave it out.
        kind: `call` regions are handed to the dialect; `reasoning` regions become reasoning text;
            `drop` openers are template tokens: the marker itself is removed.
        ends: Literal markers that end the region (the earliest wins); empty with `balanced=False` means the
            region runs to the end of the output.
        balanced: The region is the bracketed value beginning at the marker (kept in the body); it ends
            when its brackets balance.
        guard: A pattern that must match at the marker, within `guard_len` characters, for it to count.
        viable: A pattern every prefix of a text the guard can match fully matches: lets the scanner give up
            on a marker (and emit it as text) before `guard_len` characters have arrived.
        line_start: The marker counts only at the start of a line.
        output_start: The opener is tried only at the first non-blank character of the output, where
            `start` may be empty (the guard alone decides).
        quotes: String quote characters, for `balanced` regions.
        announce: For call regions: a pattern matched at the start of the body whose group 1 is the tool's
            name; once it matches (within the first 256 characters), the call is announced (`CallStarted`)
            before its region ends, and the region's first call or failure carries that id. It must match
            a prefix of a body the same way as the whole body (end it with a terminator the name cannot
            hold), so the ids are the same however the output is split.
    """

    start: str
    kind: Literal["call", "reasoning", "drop"] = "call"
    body: Body | None = None
    ends: tuple[str, ...] = ()
    balanced: bool = False
    guard: re.Pattern[str] | None = None
    guard_len: int = 0
    line_start: bool = False
    output_start: bool = False
    viable: re.Pattern[str] | None = None
    quotes: str = "\"'"
    tag: str = ""
    """A name for the dialect's own use (to tell openers apart)."""
    announce: re.Pattern[str] | None = None
    keep: int = field(init=False, repr=False, compare=False)
    """Derived: how many trailing characters of its region may begin an end marker."""
    end_key: str | None = field(init=False, repr=False, compare=False)
    """Derived: what `feed`'s inline path looks for in a delta of its call region (see `_Region.end`)."""

    def __post_init__(self) -> None:
        # Worked out once, not looked up per region: hashing an opener (a dozen fields, its body's too) to find
        # them in a dict cost ~1 µs a region.
        object.__setattr__(self, "keep", max((len(e) for e in self.ends), default=1) - 1)
        object.__setattr__(self, "end_key", _end(self))


THINK = Opener("<think>", "reasoning", ends=("</think>",))
"""`<think>...</think>` reasoning, the block most open models write."""


@dataclass(slots=True)
class _Region:
    opener: Opener
    start: int
    """Absolute offset where the region (its start marker) begins."""
    body_start: int
    parts: list[str] = field(default_factory=list[str])
    size: int = 0
    tail: str = ""
    balancer: Balancer | None = None
    keep: int = 0
    """How many trailing characters may begin an end marker."""
    head: str | None = None
    """The body so far while its call may still be announced (see `Opener.announce`), else None."""
    end: str | None = None
    """For `feed`'s inline path, a call region's one end marker (NUL for one that runs to the end of the
    output: any character would do, as a delta holding it merely takes the general path; the first character
    its end markers share when it has several, as any delta that may complete one then takes the general
    path); else None."""


_ANNOUNCE_WITHIN = 256
_SHORT = 64
"""A delta up to this long that may hold a marker is looked at once more inline (see `_between`) before the
general path; a longer one (a whole output parsed at once) goes straight to the general path's one scan."""


class RegionParser(StreamParser):
    """A stream parser for formats made of marked regions in free text (see `Opener`).

    Each call region's text goes to its opener's `body`, which may also read it while it streams. A format
    that regions and body formats cannot say subclasses this: its `openers`, and hooks (`on_region`,
    `on_progress`, `on_marker`, `after_text`) where it is odd.

    Args:
        dialect: The dialect's name.
        tools: The tools the output may call.
        openers: The openers (default: the class's `openers`).
    """

    openers: ClassVar[tuple[Opener, ...]] = ()

    __slots__ = (
        "_armed",
        "_at_start",
        "_by_start",
        "_chunk",
        "_declared",
        "_end",
        "_end_first",
        "_exact",
        "_first",
        "_firsts",
        "_hold",
        "_hold_start",
        "_holding",
        "_inline",
        "_last_char",
        "_lines",
        "_longest",
        "_m1",
        "_m2",
        "_m3",
        "_mark",
        "_marks",
        "_open",
        "_open_reasoning",
        "_openers",
        "_own_progress",
        "_plain_text_is_content",
        "_planned",
        "_prefixes",
        "_region",
        "_start_openers",
        "_starts",
        "_starts_in_line",
        "_stream",
        "_text_firsts",
        "_text_mark",
    )
    """Slots: `feed` reads this state on every delta, and an instance `__dict__` of this many keys is slower to
    read (a subclass that declares none gets one for its own attributes)."""

    _deferred_mark: ClassVar[str | None] = None
    """A subclass whose start markers all begin with this one character (a punctuation mark), none counting
    only at a line's or the output's start, and whose plain text is content (`after_text` not overridden),
    may name it: a fresh parser then works out how to scan (`_plan_scanning`) only once a delta holds it, or
    something else needs that state. Until then a delta without it is content and one with it takes the
    general path (`_scan`), which a subclass may shortcut (hermes reads an output of whole calls without it):
    an output of plain text, or of whole calls, never pays for the plan (~7k instructions a parser)."""

    def __init__(self, dialect: str, tools: ToolIndex, openers: Sequence[Opener] | None = None):
        super().__init__(dialect, tools)
        self._declared = type(self).openers if openers is None else tuple(openers)
        self._stream: BodyStream | None = None
        """The open call region's body, read while it streams (for a body that can)."""
        self._hold: str = ""
        self._hold_start: int = 0
        self._last_char = "\n"
        self._region: _Region | None = None
        self._chunk: Callable[[str], None] | None = None
        """What more of the open call region's body goes to: its body's stream, or the `on_progress` hook a
        subclass overrides; None when nothing reads it before the region ends."""
        self._open_reasoning: Opener | None = None
        """The reasoning block the output begins inside, until the output's start has been read."""
        self._holding = False
        """Between regions with the possible start of a marker held back (and the output's start read)."""
        self._end: str | None = None
        """While a call region is open and past its announcement: its `end` (see `_Region.end`)."""
        self._open = False
        """While a region is open (and the output's start read, not closed)."""
        self._text_firsts: frozenset[str] | None = None
        """While `_inline` and plain text is content, for markers that begin with several characters: a delta
        holding none of them is plain text (None when `_text_mark` decides, or nothing may pass)."""
        mark = type(self)._deferred_mark
        if mark is None:
            self._plan_scanning()
        else:  # the state `feed` reads before the general path; the rest waits for `_plan_scanning`
            self._planned = False
            self._at_start = self._inline = False
            self._text_mark = mark

    def _plan_scanning(self) -> None:
        """Work out how this parser scans: its openers' plan, and which of `feed`'s inline paths it may take
        (at `__init__`, or, for a subclass with a `_deferred_mark`, when first needed: between regions, with
        nothing held back)."""
        self._planned = True
        plan = _plan(tuple(self.active_openers()))
        self._start_openers = plan.at_start
        self._at_start = bool(self._start_openers)
        self._use_plan(plan)
        self._plain_text_is_content = type(self).after_text is RegionParser.after_text
        """Whether `after_text` would only pass plain text on as content, as the default does: a subclass that
        overrides it may set this while that holds, so that such text skips the hook."""
        self._own_progress = type(self).on_progress is not RegionParser.on_progress
        self._inline = not self._at_start
        """Between regions: no region open, no marker held back, the output's start read, not closed."""
        self._end_first = ""
        """While `_end` is set: its first character."""
        self._armed = False
        """Whether the region's tail holds that character: the end marker may be arriving."""
        self._text_mark = ""
        """While `_inline` and plain text is content: the one character a delta must hold to need more than
        passing on (feed's first check, as most deltas of most replies are plain text); else "", which every
        text holds."""
        self._m1 = self._m2 = self._m3 = ""
        """The same, when they begin with two or three characters, each tested with `in` (see `_MarksParser`):
        the first is "" when they do not decide."""
        self._plain_checks()

    def feed(self, delta: str) -> list[ParseEvent]:
        # The common cases inline, as they cost most of streaming, the commonest first: a delta between regions
        # that holds no marker's first character is plain text; a delta in a call region that does not complete
        # its end marker is more of its body; a held-back marker that is still only the start of one stays
        # held. Anything else takes the general path, which scans it.
        if self._text_mark not in delta and delta:
            emit = self._emit
            emit.fed += len(delta)
            emit.content.append(delta)
            return [TextDelta(delta)]
        if delta:
            if (end := self._end) is not None:  # in a call region (never between regions)
                region = self._region
                assert region is not None
                first = self._end_first
                if self._armed or first in delta:  # the end marker may be arriving
                    window = region.tail + delta
                    if end in window:
                        return self._scan(delta)
                    tail = region.tail = window[-region.keep :]
                    self._armed = first in tail
                # else the tail may fall behind: with no end marker's first character in it, only its length
                # counts (see `_region_feed`), and more body cannot put one there
                emit = self._emit
                emit.fed += len(delta)
                region.parts.append(delta)
                region.size += len(delta)
                if (chunk := self._chunk) is None:  # nothing reads the body before the region ends
                    return []
                events: list[ParseEvent] = []
                emit.events = events
                try:
                    chunk(delta)
                except Exception as e:  # a parser bug must not take the caller down
                    self._internal_error(e)
                return events
            if (firsts := self._text_firsts) is not None and firsts.isdisjoint(delta):
                emit = self._emit
                emit.fed += len(delta)
                emit.content.append(delta)
                return [TextDelta(delta)]
            if self._inline:
                mark, first = self._mark, self._first
                if (
                    (mark not in delta)
                    if mark is not None
                    else (first is None or self._firsts.isdisjoint(delta))
                ):
                    emit = self._emit
                    emit.fed += len(delta)
                    self._last_char = delta[-1]
                    if self._plain_text_is_content:
                        emit.content.append(delta)
                        return [TextDelta(delta)]
                    events = []
                    self._emit.events = events
                    try:
                        self.after_text(delta)
                    except Exception as e:  # a parser bug must not take the caller down
                        self._internal_error(e)
                    return events
                if (
                    len(delta) <= _SHORT
                    and (passed := self._between(delta, self._emit.fed, len(delta))) is not None
                ):
                    return passed
            elif self._holding:
                held = self._hold + delta
                if held in self._prefixes:
                    self._emit.fed += len(delta)
                    self._hold = held
                    return []
                if (
                    len(held) <= _SHORT
                    and (passed := self._between(held, self._hold_start, len(delta))) is not None
                ):
                    return passed
            elif self._open:  # what `_feed` would do, less the checks that lead here
                region = self._region
                assert region is not None
                emit = self._emit
                start = emit.fed
                emit.fed += len(delta)
                events = []
                emit.events = events
                try:
                    used = self._region_feed(region, delta, False)
                    if used >= 0:
                        self._process(delta[used:], start + used, eof=False)
                        self._settle()
                    elif region.head is None:
                        self._arm(region)
                except Exception as e:  # a parser bug must not take the caller down
                    self._internal_error(e)
                return events
            if not self._closed and not self._broken:
                return self._scan(delta)
        events = super().feed(delta)
        self._settle()
        return events

    def _scan(self, delta: str) -> list[ParseEvent]:
        """The general path for a delta of a live parser: what `StreamParser.feed` and `_feed` would do, less
        the checks that lead here."""
        if not self._planned:  # now that it is needed: then `feed` again, whose inline paths may now take it
            self._plan_scanning()
            return self.feed(delta)
        emit = self._emit
        start = emit.fed
        emit.fed += len(delta)
        events: list[ParseEvent] = []
        emit.events = events
        try:
            self._process(delta, start, eof=False)
        except Exception as e:  # a parser bug must not take the caller down with the model's output
            self._internal_error(e)
        self._settle()
        return events

    def _between(self, text: str, start: int, new: int) -> list[ParseEvent] | None:
        """Between regions, `text` (a delta, or what was held back and the delta, from offset `start`; `new`
        characters of it not yet fed): when it holds no marker, nor more than the start of one at its end, pass
        it on and hold that start back, as the general path would, without its scan. None (nothing done) when a
        marker or the start of one may be inside it, for the general path."""
        first = self._first
        m = first.search(text) if first is not None else None
        if m is None:
            self._emit.fed += new
            events = self._plain(text)
            if self._hold and not self._broken:
                self._hold, self._inline, self._holding = "", True, False
                self._plain_checks()
            return events
        p = m.start()
        held = text[p:]
        if held not in self._prefixes:
            return None
        self._emit.fed += new
        events = self._plain(text[:p]) if p else []
        if not self._broken:
            if not self._hold:
                self._inline, self._holding = False, True
                self._text_mark, self._text_firsts, self._m1 = "", None, ""
            self._hold, self._hold_start = held, start + p
        return events

    def _plain(self, text: str) -> list[ParseEvent]:
        """Pass on plain text between regions (for `_between`)."""
        self._last_char = text[-1]
        if self._plain_text_is_content:
            self._emit.content.append(text)
            return [TextDelta(text)]
        events: list[ParseEvent] = []
        self._emit.events = events
        try:
            self.after_text(text)
        except Exception as e:  # a parser bug must not take the caller down
            self._internal_error(e)
        return events

    def close(self) -> list[ParseEvent]:
        self._inline, self._holding, self._end, self._open = False, False, None, False
        self._text_mark, self._text_firsts, self._m1 = "", None, ""
        return super().close()

    def _internal_error(self, e: Exception) -> None:
        self._inline, self._holding, self._end, self._open = False, False, None, False
        self._text_mark, self._text_firsts, self._m1 = "", None, ""
        super()._internal_error(e)

    def _settle(self) -> None:
        """After a delta took the general path: which of `feed`'s inline paths the next may take."""
        if not self._planned:  # nothing was scanned (see `_deferred_mark`): the state is as it was set
            return
        region = self._region
        live = not self._closed and not self._broken
        between = live and region is None and not self._at_start
        self._inline = between and not self._hold
        self._holding = between and bool(self._hold)
        self._open = live and region is not None
        end = None
        if self._open and region is not None and region.head is None:
            end = region.end
            if end is not None:  # see `_arm`, inlined: this runs after every delta the general path takes
                self._end_first = end[0]
                self._armed = end[0] in region.tail
        self._end = end
        self._plain_checks()

    def _arm(self, region: _Region) -> None:
        """Let `feed`'s inline path take more of this call region's body (see `_Region.end`)."""
        end = self._end = region.end
        if end is not None:
            self._end_first = end[0]
            self._armed = end[0] in region.tail

    def _plain_checks(self) -> None:
        """Set `feed`'s first checks for plain text (`_text_mark`, `_text_firsts`, `_m1`..`_m3`) from the state.
        A parser with markers that count only at a line's start needs the last character of every delta, so
        it takes the next inline path, which keeps it."""
        if self._inline and self._plain_text_is_content and not self._lines:
            mark = self._mark
            if mark is None:
                self._text_mark, self._text_firsts = "", self._firsts
                self._m1, self._m2, self._m3 = self._marks
            else:
                self._text_mark, self._text_firsts, self._m1 = mark, None, ""
        else:
            self._text_mark, self._text_firsts, self._m1 = "", None, ""

    @property
    def busy_since(self) -> int | None:
        if self._region is not None:
            return self._region.start
        return self._hold_start if self._hold else None

    def plain_text_until(self) -> frozenset[str] | None:
        if not self._planned:
            self._plan_scanning()
        return self.between_regions() if self._plain_text_is_content else None

    def between_regions(self) -> frozenset[str] | None:
        """While no region is open nor any marker held back: the markers that may begin one."""
        if not self._planned:
            self._plan_scanning()
        if (
            self._region is None
            and not self._hold
            and not self._at_start
            and not self._closed
            and not self._broken
        ):
            return self._starts if self._last_char == "\n" else self._starts_in_line
        return None

    def open_reasoning(self) -> None:
        if not self._planned:
            self._plan_scanning()
        reasoning = next((o for o in self.active_openers() if o.kind == "reasoning"), None)
        if reasoning is None:
            super().open_reasoning()
            return
        if self._emit.fed:
            raise UserError("open_reasoning() must come before the first feed()")
        self._open_reasoning, self._at_start, self._inline, self._holding = reasoning, True, False, False
        self._text_mark, self._text_firsts, self._m1 = "", None, ""

    def active_openers(self) -> tuple[Opener, ...]:
        """The openers in force (override to vary them with the tools or options)."""
        return self._declared

    def use_openers(self, openers: Sequence[Opener]) -> None:
        """Set the openers in force from here on (a dialect may change them once the output's start has shown
        which variant of its format it is)."""
        if not self._planned:
            self._plan_scanning()
        self._use_plan(_plan(tuple(openers)))

    def _use_plan(self, plan: _Plan) -> None:
        self._openers, self._first, self._mark, self._prefixes = (
            plan.anywhere,
            plan.first,
            plan.mark,
            plan.prefixes,
        )
        self._exact, self._by_start, self._longest = plan.exact, plan.by_start, plan.longest
        self._firsts = plan.firsts
        self._marks = plan.marks
        self._starts, self._starts_in_line, self._lines = plan.starts, plan.starts_in_line, plan.lines

    # ------------------------------------------------------------------------------------------ hooks

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        """Handle a finished call region: `body` is its text without the markers (with them for `balanced`).
        Default: the opener's body format reads it."""
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.end(body, span, complete)
        elif opener.body is not None:
            opener.body.read(self._emit, body, span, complete)
        else:
            self._emit.fail(f"the {self.dialect} dialect gives {opener.start!r} no body format", span, body)

    def on_progress(self, opener: Opener, chunk: str, region_start: int) -> None:
        """More of a call region arrived (`chunk`). Default: a body that streams reads it; a subclass that
        overrides this streams call events itself."""
        if self._stream is not None:
            self._stream.progress(chunk)

    def partial_calls(self) -> list[PartialCall]:
        partial = self._stream.partial() if self._stream is not None else None
        return [partial] if partial is not None else []

    def on_marker(self, opener: Opener, position: int) -> None:
        """A `drop` marker was read at `position` (default: nothing more to do)."""

    def after_text(self, text: str) -> None:
        """Hook for plain text between regions (default: it is content)."""
        self._emit.text(text)

    # ----------------------------------------------------------------------------------------- scanning

    def _feed(self, delta: str, start: int) -> None:
        if not self._planned:
            self._plan_scanning()
        self._process(delta, start, eof=False)

    def _close(self) -> None:
        # between regions with nothing held back, and markers found by one pattern (or none looked for yet: see
        # `_deferred_mark`): no marker can begin in no more text (`_process` would search "" for nothing)
        if (
            self._region is None
            and not self._hold
            and not self._at_start
            and self._open_reasoning is None
            and (not self._planned or self._exact is not None)
        ):
            return
        self._process("", self._emit.fed, eof=True)

    def _pass_text(self, s: str) -> None:
        if s:
            self._last_char = s[-1]
            self.after_text(s)

    def _process(self, data: str, offset: int, eof: bool) -> None:
        while True:
            region = self._region
            if region is None:
                if self._hold:
                    data, offset = self._hold + data, self._hold_start
                    self._hold = ""
                if not data and not eof:
                    return
                if self._open_reasoning is not None:
                    skip = self._enter_open_reasoning(self._open_reasoning, data, offset, eof)
                    if skip < 0:
                        self._hold, self._hold_start = data, offset
                        return
                    data, offset = data[skip:], offset + skip
                    continue
                found = self._find_start_opener(data, eof) if self._at_start else None
                if found is None:
                    found = self._find_opener(data, eof)
                if found is None:
                    self._pass_text(data)
                    return
                p, opener, verdict = found
                self._pass_text(data[:p])
                if verdict == "maybe":
                    self._hold, self._hold_start = data[p:], offset + p
                    return
                assert opener is not None
                skip = 0 if opener.balanced else len(opener.start)
                if opener.kind == "drop":
                    data, offset = data[p + skip :], offset + p + skip
                    self.on_marker(opener, offset - skip)
                    continue
                head = "" if opener.announce is not None and opener.kind == "call" else None
                # positional: keywords cost a slotted dataclass ~0.45 µs more a region
                self._region = _Region(
                    opener, offset + p, offset + p + skip, [], 0, "", None, opener.keep, head, opener.end_key
                )
                if opener.balanced:
                    self._region.balancer = Balancer(opener.quotes)
                elif opener.kind == "reasoning":
                    self._emit.reasoning("")
                if opener.kind == "call":
                    self._stream = self._body_stream(opener, self._region)
                    self._chunk = self._chunk_reader(opener, self._region.start)
                data, offset = data[p + skip :], offset + p + skip
                continue
            used = self._region_feed(region, data, eof)
            if used < 0:
                return
            data, offset = data[used:], offset + used
            if eof and not data:
                return

    def _body_stream(self, opener: Opener, region: _Region) -> BodyStream | None:
        """The body's reader of a call region that streams, if its body format has one."""
        stream = getattr(opener.body, "stream", None)
        if stream is None:
            return None
        return cast("BodyStream | None", stream(self._emit, region.start, region.body_start, region.keep))

    def _chunk_reader(self, opener: Opener, start: int) -> Callable[[str], None] | None:
        if self._own_progress:
            return lambda chunk: self.on_progress(opener, chunk, start)
        return self._stream.progress if self._stream is not None else None

    def _enter_open_reasoning(self, opener: Opener, data: str, offset: int, eof: bool) -> int:
        """Open the reasoning block the output begins inside; returns how much of `data` its own start marker
        takes (if the model repeats it anyway), or -1 while the start of `data` may still become it."""
        q = len(data) - len(data.lstrip())
        if not eof and len(data) - q < len(opener.start) and opener.start.startswith(data[q:]):
            return -1
        skip = q + len(opener.start) if data.startswith(opener.start, q) else 0
        self._open_reasoning, self._at_start = None, False
        self._region = _Region(opener, offset, offset + skip, [], 0, "", None, opener.keep)
        self._emit.reasoning("")
        return skip

    def _find_start_opener(self, data: str, eof: bool) -> tuple[int, Opener | None, str] | None:
        q = len(data) - len(data.lstrip())
        if q == len(data):
            return None if eof else (0, None, "maybe")
        for o in self._start_openers:
            if not data.startswith(o.start, q):
                if not eof and o.start.startswith(data[q:]):  # the marker may still be arriving
                    return q, None, "maybe"
                continue
            if o.guard is not None:
                verdict = _guard(o, data, q, eof)
                if verdict == "maybe":
                    return q, None, "maybe"
                if verdict == "no":
                    continue
            self._at_start = False
            return q, o, "yes"
        self._at_start = False
        return None

    def _find_opener(self, data: str, eof: bool) -> tuple[int, Opener | None, str] | None:
        if self._first is None:
            return None
        exact = self._exact
        if exact is not None:  # no guards, no line starts, no marker beginning another: one match decides
            for m in self._first.finditer(data):
                p = m.start()
                found = exact.match(data, p)
                if found is not None:
                    return p, self._by_start[found.group()], "yes"
                if not eof and len(data) - p < self._longest and data[p:] in self._prefixes:
                    return p, None, "maybe"
            return None
        for m in self._first.finditer(data):
            p = m.start()
            maybe = False
            for o in self._openers:
                avail = len(data) - p
                if not data.startswith(o.start, p):
                    if not eof and avail < len(o.start) and o.start.startswith(data[p:]):
                        maybe = True
                    continue
                if o.line_start and (data[p - 1] if p else self._last_char) != "\n":
                    continue
                if o.guard is not None:
                    verdict = _guard(o, data, p, eof)
                    if verdict == "maybe":
                        maybe = True
                    if verdict != "yes":
                        continue
                if maybe:  # an earlier-listed opener may still match here
                    return p, None, "maybe"
                return p, o, "yes"
            if maybe:
                return p, None, "maybe"
        return None

    def _region_feed(self, region: _Region, data: str, eof: bool) -> int:
        """Feed `data` to the open region; returns how much of `data` it used once it ends, else -1."""
        o = region.opener
        if o.balanced:
            assert region.balancer is not None
            k = region.balancer.feed(data)
            if k >= 0:
                self._end_region(region, data[:k], region.body_start + region.size + k, True)
                return k
            self._grow(region, data)
            if eof:
                self._end_region(region, "", region.body_start + region.size, False)
                return len(data)
            return -1
        if o.ends:
            window = region.tail + data
            best, best_end = -1, ""
            for e in o.ends:
                j = window.find(e)
                if j >= 0 and (best < 0 or j < best):
                    best, best_end = j, e
            if best >= 0:
                cut = best - len(region.tail)  # may be negative: the marker began in the tail
                used = cut + len(best_end)
                if o.kind != "call":
                    if o.kind == "reasoning":
                        self._emit.reasoning(window[:best])
                    self._region = None
                    return used
                if cut < 0:
                    self._trim(region, -cut)
                    self._end_region(region, "", region.body_start + region.size, True, len(best_end))
                else:
                    body_end = region.body_start + region.size + cut
                    self._end_region(region, data[:cut], body_end, True, len(best_end))
                return used
            keep = region.keep
            if o.kind != "call":
                # emit reasoning as it comes, holding back only what may begin an end marker
                safe = len(window) - keep
                if safe > 0:
                    if o.kind == "reasoning":
                        self._emit.reasoning(window[:safe])
                    region.tail = window[safe:]
                else:
                    region.tail = window
                if eof:
                    if o.kind == "reasoning":
                        self._emit.reasoning(region.tail)
                    self._region = None
                    return len(data)
                return -1
            self._grow(region, data)
            region.tail = window[-keep:] if keep else ""
        else:
            self._grow(region, data)
        if eof:
            self._end_region(region, "", region.body_start + region.size, not o.ends)
            return len(data)
        return -1

    def _grow(self, region: _Region, data: str) -> None:
        if data:
            region.parts.append(data)
            region.size += len(data)
            if region.opener.kind == "call":
                if region.head is not None:
                    self._announce(region, data, final=False)
                if self._chunk is not None:
                    self._chunk(data)

    def _announce(self, region: _Region, data: str, *, final: bool) -> None:
        """Announce the region's call once its name is known (for openers with `announce`)."""
        pattern, head = region.opener.announce, region.head
        assert pattern is not None
        assert head is not None
        head += data
        # only what can no longer turn out to be the start of the end marker is surely body
        known = len(head) if final else len(head) - region.keep
        m = pattern.match(head, 0, min(known, _ANNOUNCE_WITHIN))
        if m is not None:
            call_id = self._emit.new_id()
            self._emit.started(call_id, m.group(1).strip())
            self._emit.announced = call_id
            region.head = None
        else:
            region.head = None if final or known >= _ANNOUNCE_WITHIN else head

    def _trim(self, region: _Region, n: int) -> None:
        body = "".join(region.parts)[: region.size - n]
        region.parts, region.size = [body], len(body)

    def _end_region(self, region: _Region, last: str, end: int, complete: bool, marker_len: int = 0) -> None:
        self._region = None
        o = region.opener
        if o.kind == "reasoning":
            self._emit.reasoning(region.tail + last)
            return
        if o.kind == "drop":
            return
        parts = region.parts
        if not parts:  # the body arrived whole with its end marker (a whole output, or a large chunk)
            body = last
            # a body stream that reads a whole body at once is not also handed it as progress first
            streams = last and self._chunk is not None and not self._reads_whole()
        else:
            if last:
                parts.append(last)
            body = "".join(parts)
            streams = last and self._chunk is not None
        if region.head is not None:
            self._announce(region, last, final=True)
        if streams:
            assert self._chunk is not None
            self._chunk(last)
        self.on_region(o, body, (region.start, end + marker_len), complete)
        self._emit.announced = None

    def _reads_whole(self) -> bool:
        """Whether the open region's body stream (when it is what reads its progress) may take a whole body in
        `end` with no `progress` before it (see `BodyStream`)."""
        return not self._own_progress and getattr(self._stream, "reads_whole", False)


class _MarksParser(RegionParser):
    """A `RegionParser` whose start markers begin with two or three characters (`functools` and `<think>`):
    its first check tests each with `in`, as `RegionParser.feed` tests one (a set's `isdisjoint`, the check
    it falls back on, costs as much as the rest of passing a delta on)."""

    __slots__ = ()

    def feed(self, delta: str) -> list[ParseEvent]:
        if self._m1 not in delta and self._m2 not in delta and self._m3 not in delta and delta:
            emit = self._emit
            emit.fed += len(delta)
            emit.content.append(delta)
            return [TextDelta(delta)]
        if self._m1 and 0 < len(delta) <= _SHORT:
            # between regions, with one of those characters: `_between`, its commonest case (a word marker's
            # letter in prose, the `f` of `for`) first
            first = self._first
            assert first is not None
            if first.search(delta) is None:
                emit = self._emit
                emit.fed += len(delta)
                emit.content.append(delta)
                return [TextDelta(delta)]
            passed = self._between(delta, self._emit.fed, len(delta))
            return self._scan(delta) if passed is None else passed
        return RegionParser.feed(self, delta)


def region_parser(dialect: str, tools: ToolIndex, openers: Sequence[Opener]) -> RegionParser:
    """A parser for these openers (a `RegionParser`, with a cheaper first check when their start markers begin
    with two or three characters)."""
    if _plan(tuple(openers)).marks[0]:
        return _MarksParser(dialect, tools, openers)
    return RegionParser(dialect, tools, openers)


def _guard(o: Opener, data: str, p: int, eof: bool) -> str:
    """Whether `o`'s guard matches at `p`: yes, no, or maybe (more text needed)."""
    assert o.guard is not None
    if o.guard.match(data, p, p + o.guard_len):
        return "yes"
    if eof or len(data) - p >= o.guard_len:
        return "no"
    if o.viable is not None and not o.viable.fullmatch(data, p, len(data)):
        return "no"
    return "maybe"


@dataclass(frozen=True, slots=True)
class _Plan:
    """How a parser looks for a set of openers (worked out once per set, not per parser)."""

    anywhere: tuple[Opener, ...]
    """The openers that may open anywhere (not only at the output's start)."""
    at_start: tuple[Opener, ...]
    """The openers tried only at the output's start."""
    starts: frozenset[str]
    """The start markers of `anywhere`."""
    starts_in_line: frozenset[str]
    """The same, as they may follow text not ending a line (a marker that counts only at a line's start needs
    a newline first)."""
    lines: bool
    """Whether any of `anywhere` counts only at a line's start."""
    first: re.Pattern[str] | None
    """Finds where any of their start markers may begin."""
    firsts: frozenset[str]
    """The first characters of their start markers: a text holding none of them holds no marker nor the start
    of one (a cheaper test than `first`)."""
    marks: tuple[str, str, str]
    """When their start markers begin with two or three characters: those characters (one repeated to make
    three), else three "" (see `_MarksParser`)."""
    mark: str | None
    """The one character `first` finds, when that is all it finds (`in` is faster than a search); NUL when
    there is nothing to find, as a delta holding it merely takes the general path."""
    prefixes: frozenset[str]
    """Texts that can only be the start of a marker still arriving: proper prefixes of a start marker that no
    start marker begins."""
    exact: re.Pattern[str] | None
    """When no opener has a guard or counts only at a line's start and no start marker begins another, the
    start markers as one pattern: a match at a position is the opener there (else None)."""
    by_start: dict[str, Opener]
    """The first opener listed for each start marker."""
    longest: int
    """The length of the longest start marker."""


_PLANS: dict[int, tuple[tuple[Opener, ...], _Plan]] = {}
"""Plans by the identity of their openers' tuple (a dialect's is a class attribute, the same every parser):
finding one in `_opener_plan`'s cache hashes every opener, which cost more than the rest of making a parser."""


def _plan(openers: tuple[Opener, ...]) -> _Plan:
    known = _PLANS.get(id(openers))
    if known is not None and known[0] is openers:  # the entry holds its tuple, so the id is not reused
        return known[1]
    plan = _opener_plan(openers)
    if len(_PLANS) >= 256:  # openers made afresh per parser must not grow it without end
        _PLANS.clear()
    _PLANS[id(openers)] = (openers, plan)
    return plan


@functools.lru_cache(maxsize=256)
def _opener_plan(openers: tuple[Opener, ...]) -> _Plan:
    anywhere = tuple(o for o in openers if not o.output_start)
    starts = frozenset(o.start for o in anywhere)
    firsts = {s[0] for s in starts}
    mark = "\x00" if not starts else None
    if len(firsts) == 1 and not next(iter(firsts)).isalnum():
        mark = next(iter(firsts))
    simple = all(o.guard is None and not o.line_start for o in anywhere) and not any(
        s != t and s.startswith(t) for s in starts for t in starts
    )
    by_start: dict[str, Opener] = {}
    for o in anywhere:
        by_start.setdefault(o.start, o)
    return _Plan(
        anywhere=anywhere,
        at_start=tuple(o for o in openers if o.output_start),
        starts=starts,
        starts_in_line=frozenset(("\n" if o.line_start else "") + o.start for o in anywhere),
        lines=any(o.line_start for o in anywhere),
        first=marker_pattern(starts),
        firsts=frozenset(firsts),
        marks=cast("tuple[str, str, str]", tuple((sorted(firsts) * 3)[:3]))
        if 2 <= len(firsts) <= 3
        else ("", "", ""),
        mark=mark,
        prefixes=frozenset(
            s[:n] for s in starts for n in range(1, len(s)) if not any(s[:n].startswith(t) for t in starts)
        ),
        exact=re.compile("|".join(re.escape(s) for s in sorted(starts))) if simple and starts else None,
        by_start=by_start,
        longest=max(map(len, starts), default=0),
    )


@functools.lru_cache(maxsize=256)
def marker_pattern(starts: frozenset[str]) -> re.Pattern[str] | None:
    """A pattern finding where any of these markers may begin in a text.

    A marker beginning with punctuation is found by its first character, rare in prose; one beginning with a
    letter (`functools`, `Action:`) by itself or by a prefix of it that ends the text, so that prose full of
    that letter still reads as plain text.
    """
    marks = sorted({s[0] for s in starts if not s[0].isalnum()})
    words = sorted(s for s in starts if s[0].isalnum())
    parts = ["[" + "".join(re.escape(c) for c in marks) + "]"] if marks else []
    parts += [re.escape(w) for w in words]
    ends = "|".join(_prefix_at_end(w) for w in words)
    if ends:
        parts.append(f"(?:{ends})\\Z")
    return re.compile("|".join(parts)) if parts else None


def _prefix_at_end(word: str) -> str:
    """A pattern matching a proper prefix of `word` that ends the text."""
    inner = ""
    for c in reversed(word[:-1]):
        inner = f"{re.escape(c)}(?:{inner})?" if inner else re.escape(c)
    return inner
