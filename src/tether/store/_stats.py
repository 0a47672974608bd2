"""Telemetry from the journal (seed 002): calls, success rate, needs loops, failure reasons, durations."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tether.store._entries import JournalEntry

__all__ = ["JournalStats", "ToolStats", "compute_stats"]


@dataclass(frozen=True, slots=True)
class ToolStats:
    calls: int
    """Calls answered: run or refused."""
    ok: int
    needs: int
    errors: int
    p50_ms: float | None
    """Median duration of the calls that ran."""
    p95_ms: float | None


@dataclass(frozen=True, slots=True)
class JournalStats:
    calls: int
    ok: int
    needs: int
    """Calls answered with `needs`: the model had to ask the user for missing information."""
    needs_resolved: int
    """`needs` answers followed, in the same session, by a successful call to the same tool."""
    refused: int
    """Calls a guard stopped before their tool ran."""
    in_doubt: int
    """Intents with neither a result nor a resolution."""
    failure_reasons: dict[str, int] = field(default_factory=dict[str, int])
    """Error code -> count, most frequent first."""
    tools: dict[str, ToolStats] = field(default_factory=dict[str, ToolStats])

    @property
    def success_rate(self) -> float | None:
        return self.ok / self.calls if self.calls else None


def compute_stats(entries: Iterable[JournalEntry]) -> JournalStats:
    """Statistics over journal entries (in append order)."""
    answers: list[JournalEntry] = []
    completed: set[int | None] = set()
    intents: list[JournalEntry] = []
    for entry in entries:
        if entry.kind in ("result", "refusal"):
            answers.append(entry)
        if entry.kind in ("result", "resolution"):
            completed.add(entry.intent_id)
        elif entry.kind == "intent":
            intents.append(entry)
    failures = Counter(e.error_code or "UNKNOWN" for e in answers if e.outcome == "error")
    return JournalStats(
        calls=len(answers),
        ok=sum(e.outcome == "ok" for e in answers),
        needs=sum(e.outcome == "needs" for e in answers),
        needs_resolved=_needs_resolved(answers),
        refused=sum(e.kind == "refusal" for e in answers),
        in_doubt=sum(e.id not in completed for e in intents),
        failure_reasons=dict(failures.most_common()),
        tools={
            name: _tool_stats([e for e in answers if e.tool == name])
            for name in sorted({e.tool for e in answers})
        },
    )


def _tool_stats(answers: Sequence[JournalEntry]) -> ToolStats:
    durations = sorted(e.duration_ms for e in answers if e.duration_ms is not None)
    return ToolStats(
        calls=len(answers),
        ok=sum(e.outcome == "ok" for e in answers),
        needs=sum(e.outcome == "needs" for e in answers),
        errors=sum(e.outcome == "error" for e in answers),
        p50_ms=_percentile(durations, 0.50),
        p95_ms=_percentile(durations, 0.95),
    )


def _percentile(ordered: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile of sorted values."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _needs_resolved(answers: Sequence[JournalEntry]) -> int:
    waiting: Counter[tuple[str | None, str]] = Counter()
    resolved = 0
    for e in answers:
        key = (e.session_id, e.tool)
        if e.outcome == "needs":
            waiting[key] += 1
        elif e.outcome == "ok" and waiting[key]:
            resolved += waiting.pop(key)
    return resolved
