"""`auto`: detect the format among the text dialects, committing as early as it safely can.

Every candidate dialect parses the output side by side (linear, a constant factor slower). `auto` commits to
the candidate whose first complete call begins earliest (ties go to the more specific format, or to one that read
a reasoning block where the others did not) as soon as no
other candidate still holds undecided text that begins at or before it; from then on it is that dialect.
Until it commits, text that every candidate has already passed on as content, unchanged, streams at once
(so a reply with no call streams as it comes); everything else is held back. Output with no call at all is
read as plain text (with `<think>` reasoning).
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._dialect import Dialect
from tether.dialects._events import ParseEvent, ParseResult, PartialCall, TextDelta
from tether.dialects._parser import StreamParser
from tether.dialects._regions import marker_pattern
from tether.dialects._registry import get_dialect
from tether.dialects._tools import ToolIndex
from tether.exceptions import UserError
from tether.types import ToolCall, ToolResultMessage

__all__ = ["CANDIDATES", "Auto"]

CANDIDATES = (
    "hermes",
    "reka",
    "functionary_v3_1",
    "qwen3_coder_xml",
    "glm45",
    "mistral",
    "kimi_k2",
    "deepseek_v31",
    "deepseek_r1",
    "command_r",
    "nemotron_v2",
    "functionary_v3_2",
    "firefunction_v2",
    "gemma4",
    "harmony",
    "olmo3_pythonic",
    "lfm2",
    "seed_oss",
    "deepseek_v32",
    "deepseek_v4",
    "step3",
    "minicpm5_xml",
    "apertus",
    "internlm2",
    "longcat",
    "granite",
    "granite_20b_fc",
    "minimax",
    "apriel",
    "hunyuan_a13b",
    "json_calls",
    "fenced",
    "yaml",
    "llama3_json",
    "xlam",
    "pythonic",
    "gigachat3",
)
"""Text dialects `auto` chooses among, most specific first (ties go to the earlier)."""


class AutoParser(StreamParser):
    """Runs the candidates side by side until one can be chosen.

    Most of a reply is plain text that every candidate passes on unchanged. A candidate between regions says
    which characters could make a delta matter to it (`plain_text_until`); a delta holding none of the waiting
    candidates' characters is fed only to the others, and the waiting ones catch up, with everything they
    missed in one piece, when a delta may matter to them (or at the end, or when chosen). The result is the
    same; the cost per delta no longer grows with the number of candidates.
    """

    def __init__(self, tools: ToolIndex, candidates: Sequence[str] = CANDIDATES):
        super().__init__("auto", tools)
        self._candidates = [get_dialect(name).stream_parser(tools) for name in candidates]
        self._reset()

    def _reset(self) -> None:
        n = len(self._candidates)
        self._held: list[list[ParseEvent]] = [[] for _ in range(n)]
        self._chosen: StreamParser | None = None
        self._agreed: list[int] | None = [0] * n
        """Per candidate, how much of the output it has passed on as content, unchanged and before anything
        else; None once one has done something else (from then on nothing streams until `auto` commits)."""
        self._released = 0
        self._output = _Output()
        self._synced = [0] * n
        """Per candidate, how much of the output it has been fed."""
        self._busy: list[int] = list(range(n))
        """Candidates fed every delta."""
        self._markers: list[frozenset[str] | None] = [None] * n
        """Per waiting candidate, the markers a delta must hold (or begin at its end) to matter to it."""
        self._waiting_for: re.Pattern[str] | None = None
        """Where a delta may matter to some waiting candidate; None when none waits."""
        self._waiting_markers: frozenset[str] = frozenset()
        """The markers some waiting candidate waits for."""
        self._waiting_firsts: frozenset[str] = frozenset()
        """Their first characters: a delta holding none of them matters to no waiting candidate (a cheaper
        test than `_waiting_for`, which most deltas of prose pass)."""
        self._deferred: int | None = None
        """Where the output ends with what may be the start of a word marker (`functools`) that every
        candidate waits for: held back by `auto` itself, not released, until the next delta shows whether it is
        the marker (then those waiting for it wake and catch up) or prose (then it is released)."""
        self._call_seen = False
        """Whether any candidate has read a call (until then there is nothing to decide)."""
        self._quiet = False
        """Every candidate waits (`_waiting_for` is set, none is busy), none is chosen, and the parser is live:
        `feed`'s inline path may take a delta."""

    @property
    def chosen(self) -> str | None:
        """The dialect committed to, once known."""
        return self._chosen.dialect if self._chosen else None

    def open_reasoning(self) -> None:
        """Candidates with no reasoning block cannot be the format of an output that begins inside one."""
        able: list[StreamParser] = []
        for p in self._candidates:
            try:
                p.open_reasoning()
            except UserError:
                continue
            able.append(p)
        self._candidates = able
        self._reset()

    def feed(self, delta: str) -> list[ParseEvent]:
        # The common case inline, as it is most of a reply: every candidate waits, and this delta cannot matter
        # to any of them, or ends with what may be the start of a word marker, which `auto` holds back itself
        # (waking a candidate for that would wake it for every `f` that ends a delta).
        if self._quiet and delta:
            waiting = self._waiting_for
            assert waiting is not None
            emit = self._emit
            start = emit.fed
            deferred = self._deferred
            since = start if deferred is None else deferred
            probe = delta if since == start else self._output.slice(since, start) + delta
            m = None if self._waiting_firsts.isdisjoint(probe) else waiting.search(probe)
            if m is None or (
                self._agreed is not None
                and m.end() == len(probe)
                and m.group()[0].isalnum()
                and m.group() not in self._waiting_markers
            ):
                fed = emit.fed = start + len(delta)
                output = self._output  # `_Output.append`, inlined
                pieces = output.pieces
                if len(pieces) > output.first and len(pieces[-1]) < _PIECE:
                    pieces[-1] += delta
                    output.ends[-1] = fed
                else:
                    pieces.append(delta)
                    output.ends.append(fed)
                deferred = self._deferred = None if m is None else since + m.start()
                released = self._released
                if self._agreed is not None:  # every candidate passes it on: so can `auto`
                    upto = fed if deferred is None else deferred
                    if upto > released:
                        text = delta if released == start and upto == fed else output.slice(released, upto)
                        emit.content.append(text)
                        self._released = upto
                        return [TextDelta(text)]
                return []
        return super().feed(delta)

    def _feed(self, delta: str, start: int) -> None:
        if self._chosen is not None:
            self._emit.events.extend(self._chosen.feed(delta))
            return
        self._output.append(delta)
        fed = self._busy
        waiting = self._waiting_for
        # with the start of a marker held back, the marker may end in this delta
        deferred, self._deferred = self._deferred, None
        probe = delta if deferred is None else self._output.slice(deferred, start + len(delta))
        if waiting is not None and waiting.search(probe) is not None:  # wake those it may matter to
            markers = self._markers
            fed = [*fed, *(n for n, m in enumerate(markers) if m is not None and _matters(m, probe))]
        missed: dict[int, str] = {}  # woken candidates mostly missed the same text: slice it once
        moved = False
        for n in fed:
            since = self._synced[n]
            if since < start:
                text = missed.get(since)
                if text is None:
                    text = missed[since] = self._output.slice(since, start) + delta
                self._feed_one(n, text, since)
            else:
                self._feed_one(n, delta, start)
            markers = self._waits(n)
            if markers != self._markers[n]:
                self._markers[n], moved = markers, True
        if moved:
            self._plan()
        if self._call_seen:
            self._decide(final=False)
        if self._chosen is None and self._agreed is not None:
            agreed = self._agreed
            upto = min((agreed[n] for n in self._busy), default=self._emit.fed)
            if upto > self._released:
                self._emit.text(self._output.slice(self._released, upto))
                self._released = upto
        output = self._output
        if len(output.pieces) - output.first > 64:  # now and then, let go of what no one needs any more
            output.forget(min(self._released, *self._synced))

    def _feed_one(self, n: int, delta: str, start: int) -> None:
        p = self._candidates[n]
        events = p.feed(delta)
        if p.first_call_at is not None:
            self._call_seen = True
        self._held[n].extend(events)
        self._agree(n, events, delta, start)
        self._synced[n] = start + len(delta)

    def _catch_up(self, n: int, upto: int) -> None:
        """Feed candidate `n` the output it has not seen before `upto`."""
        since = self._synced[n]
        if since < upto:
            self._feed_one(n, self._output.slice(since, upto), since)

    def _waits(self, n: int) -> frozenset[str] | None:
        """The markers candidate `n` may wait for, or None if it must see every delta: also while it has held
        back text from what it passed on (a dropped marker), as that keeps the release of text waiting."""
        markers = self._candidates[n].plain_text_until()
        agreed = self._agreed
        if markers is None or (agreed is not None and agreed[n] < self._synced[n]):
            return None
        return markers

    def _plan(self) -> None:
        """After a candidate began or stopped waiting: who is fed every delta, and where one may matter to the
        others."""
        markers = self._markers
        self._busy = [n for n, m in enumerate(markers) if m is None]
        waiting = frozenset(m for m in markers if m is not None)
        self._waiting_for = _union(waiting) if waiting else None
        self._waiting_markers = frozenset[str]().union(*waiting)
        self._waiting_firsts = frozenset(m[0] for m in self._waiting_markers)
        self._quiet = (
            self._waiting_for is not None
            and not self._busy
            and self._chosen is None
            and not self._closed
            and not self._broken
        )

    def _agree(self, n: int, events: list[ParseEvent], delta: str, start: int) -> None:
        agreed = self._agreed
        if agreed is None:
            return
        for e in events:
            at = agreed[n]
            if not isinstance(e, TextDelta):
                self._agreed = None
                return
            text = e.text
            if at >= start:  # the common case: text from the delta just fed
                same = delta.startswith(text, at - start)
            else:
                same = self._output.slice(at, at + len(text)) == text
            if not same:
                self._agreed = None
                return
            agreed[n] = at + len(text)

    def close(self) -> list[ParseEvent]:
        self._quiet = False
        return super().close()

    def _internal_error(self, e: Exception) -> None:
        self._quiet = False
        super()._internal_error(e)

    def _close(self) -> None:
        if self._chosen is not None:
            self._emit.events.extend(self._chosen.close())
            return
        for n, (held, p) in enumerate(zip(self._held, self._candidates, strict=True)):
            self._catch_up(n, self._emit.fed)
            held.extend(p.close())
        self._decide(final=True)

    def _decide(self, *, final: bool) -> None:
        best: int | None = None
        best_at = 0
        for n, p in enumerate(self._candidates):
            at = p.first_call_at
            if at is None:
                continue
            # a tie goes to the earlier candidate, unless only the later one read a reasoning block: the
            # block's markers are the format's too (reka's `<reasoning>` calls are hermes's `<tool_call>`s)
            if (
                best is None
                or at < best_at
                or (at == best_at and p.reasoned and not self._candidates[best].reasoned)
            ):
                best, best_at = n, at
        if best is None:
            if not final:
                return
            best = _plain_reading(
                self._candidates, self._output.slice(self._released, self._emit.fed), self._released
            )
        elif not final:
            for p in self._candidates:
                since = p.busy_since
                if since is not None and since <= best_at and p.first_call_at is None:
                    return  # another format may still read a call that begins earlier
        self._catch_up(best, self._emit.fed)
        self._chosen = self._candidates[best]
        self._quiet = False
        self._emit.events.extend(_without_text(self._held[best], self._released))
        self._held = []
        self._candidates = []
        self._agreed = None

    @property
    def result(self) -> ParseResult:
        if self._chosen is not None:
            return self._chosen.result
        return super().result

    def partial_calls(self) -> list[PartialCall]:
        return self._chosen.partial_calls() if self._chosen else []


@functools.lru_cache(maxsize=256)
def _union(marker_sets: frozenset[frozenset[str]]) -> re.Pattern[str] | None:
    return marker_pattern(frozenset[str]().union(*marker_sets))


def _matters(markers: frozenset[str], delta: str) -> bool:
    pattern = marker_pattern(markers)
    return pattern is not None and pattern.search(delta) is not None


def _plain_reading(candidates: Sequence[StreamParser], rest: str, released: int) -> int:
    """For output with no call: the first candidate that read reasoning in it; else the first that, without
    an error, read its own markup in it (harmony's `<|channel|>final<|message|>Hi<|return|>` is `Hi`); else
    the first, which reads it as it is. `rest` is the output after the `released` characters every
    candidate passed on as they were."""
    results = [p.result for p in candidates]
    for n, r in enumerate(results):
        if r.reasoning is not None:
            return n
    for n, r in enumerate(results):
        if not r.errors and r.content[released:] != rest:
            return n
    return 0


def _without_text(events: list[ParseEvent], chars: int) -> list[ParseEvent]:
    """`events` less their first `chars` characters of text (already passed on)."""
    out: list[ParseEvent] = []
    for e in events:
        if chars and isinstance(e, TextDelta):
            if len(e.text) <= chars:
                chars -= len(e.text)
                continue
            e, chars = TextDelta(e.text[chars:]), 0
        out.append(e)
    return out


_PIECE = 256


class _Output:
    """The output fed so far, in pieces of up to about `_PIECE` characters (small deltas are merged, so that
    reading back a long stretch joins few pieces), read back by offset without joining it all."""

    __slots__ = ("ends", "first", "pieces")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.ends: list[int] = []
        """The offset just past each piece."""
        self.first = 0
        """Pieces before this one are forgotten (no longer needed)."""

    def append(self, piece: str) -> None:
        pieces, ends = self.pieces, self.ends
        if len(pieces) > self.first and len(pieces[-1]) < _PIECE:  # never grow a forgotten piece
            pieces[-1] += piece
            ends[-1] += len(piece)
            return
        pieces.append(piece)
        ends.append((ends[-1] if ends else 0) + len(piece))

    def slice(self, start: int, stop: int) -> str:
        i = bisect_right(self.ends, start, lo=self.first)
        parts: list[str] = []
        while start < stop and i < len(self.pieces):
            begin = self.ends[i] - len(self.pieces[i])
            part = self.pieces[i][start - begin : stop - begin]
            parts.append(part)
            start += len(part)
            i += 1
        return "".join(parts)

    def forget(self, before: int) -> None:
        while self.first < len(self.pieces) and self.ends[self.first] <= before:
            self.pieces[self.first] = ""
            self.first += 1


class Auto(Dialect):
    """Detects the format (see the module docstring)."""

    name: ClassVar[str] = "auto"

    def stream_parser(self, tools: ToolIndex) -> AutoParser:
        return AutoParser(tools)

    def render_tools(self, tools: ToolIndex) -> str:
        return get_dialect("hermes").render_tools(tools)

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return get_dialect("hermes").render_results(results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """As `hermes` writes them (the first format `auto` tries)."""
        return get_dialect("hermes").render_calls(calls)
