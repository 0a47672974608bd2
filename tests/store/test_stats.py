"""Telemetry from the journal (seed 002): calls, success rate, needs loops, failure reasons, p50/p95."""

from __future__ import annotations

from tether.store import JournalEntry, JournalStats, ToolStats, compute_stats


def entry(kind: str, tool: str, outcome: str | None = None, **fields: object) -> JournalEntry:
    return JournalEntry(kind=kind, call_id="c", tool=tool, created_at=0.0, outcome=outcome, **fields)  # pyright: ignore[reportArgumentType]


def test_stats_summarise_calls_outcomes_reasons_and_durations() -> None:
    entries = [
        entry("intent", "schedule", id=1, session_id="s"),
        entry("result", "schedule", "needs", id=2, intent_id=1, session_id="s", duration_ms=10.0),
        entry("intent", "schedule", id=3, session_id="s"),
        entry("result", "schedule", "ok", id=4, intent_id=3, session_id="s", duration_ms=30.0),
        entry("refusal", "search", "error", id=5, error_code="RATE_LIMITED"),
        entry("refusal", "search", "error", id=6, error_code="RATE_LIMITED"),
        entry("intent", "search", id=7),
        entry("result", "search", "error", id=8, intent_id=7, error_code="TIMEOUT", duration_ms=100.0),
        entry("intent", "transfer", id=9),
    ]
    stats = compute_stats(entries)
    assert stats == JournalStats(
        calls=5,
        ok=1,
        needs=1,
        needs_resolved=1,
        refused=2,
        in_doubt=1,
        failure_reasons={"RATE_LIMITED": 2, "TIMEOUT": 1},
        tools={
            "schedule": ToolStats(calls=2, ok=1, needs=1, errors=0, p50_ms=10.0, p95_ms=30.0),
            "search": ToolStats(calls=3, ok=0, needs=0, errors=3, p50_ms=100.0, p95_ms=100.0),
        },
    )
    assert stats.success_rate == 0.2
