"""`PerinMetrics`: seed 002's counters (tool calls, success rate, missing-field loops, time to confirm,
failure reasons) as OpenTelemetry metrics, fed by the executor as a `Recorder`.

OpenTelemetry (the `perin` extra) is imported when a `PerinMetrics` is made, never by `import tether`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tether.exceptions import UserError
from tether.execution import CallReport
from tether.types import ErrorEnvelope, NeedsEnvelope, OkEnvelope

__all__ = ["PerinMetrics"]


class PerinMetrics:
    """Counts every answered Perin call; pass it to the executor: `Executor(..., recorders=[metrics])`.

    Instruments (meter `tether.packs.perin`): `perin.tool_calls` (attributes `tool`, `outcome`: ok, needs, error),
    `perin.tool_failures` (`tool`, `code`), `perin.missing_field_loops` (`tool`, `field`) and the histogram
    `perin.time_to_confirm` (seconds from proposal to booking). `totals` keeps the same counts in memory.

    Args:
        meter_provider: Where the metrics go (default: OpenTelemetry's global provider).
    """

    def __init__(self, meter_provider: Any = None):
        try:
            from opentelemetry import metrics
        except ImportError:
            raise UserError("PerinMetrics needs OpenTelemetry: pip install 'tether[perin]'.") from None
        meter = (meter_provider or metrics.get_meter_provider()).get_meter("tether.packs.perin")
        self._calls = meter.create_counter("perin.tool_calls", description="Perin tool calls by outcome")
        self._failures = meter.create_counter(
            "perin.tool_failures", description="Refused or failed calls by code"
        )
        self._loops = meter.create_counter(
            "perin.missing_field_loops", description="Calls answered with `needs`"
        )
        self._confirm = meter.create_histogram(
            "perin.time_to_confirm", unit="s", description="Proposal to booking"
        )
        self.totals: Counter[tuple[str, str]] = Counter()
        """`(tool, outcome)` and `(tool, "error:<code>")` -> count, for a quick look without an exporter."""

    def record(self, report: CallReport) -> None:
        tool, envelope = report.call.name, report.envelope
        if isinstance(envelope, OkEnvelope):
            outcome = "ok"
            data: Any = envelope.data
            if isinstance(data, dict) and "timeToConfirmS" in data:
                self._confirm.record(float(data["timeToConfirmS"]), {"tool": tool})  # pyright: ignore[reportUnknownArgumentType]
        elif isinstance(envelope, NeedsEnvelope):
            outcome = "needs"
            for field in envelope.needs:
                self._loops.add(1, {"tool": tool, "field": field})
        else:
            assert isinstance(envelope, ErrorEnvelope)
            outcome = "error"
            self._failures.add(1, {"tool": tool, "code": envelope.error.code})
            self.totals[(tool, f"error:{envelope.error.code}")] += 1
        self._calls.add(1, {"tool": tool, "outcome": outcome})
        self.totals[(tool, outcome)] += 1

    def success_rate(self, tool: str) -> float | None:
        """Share of the tool's calls that succeeded, or `None` before its first call."""
        answered = sum(self.totals[(tool, o)] for o in ("ok", "needs", "error"))
        return None if not answered else self.totals[(tool, "ok")] / answered
