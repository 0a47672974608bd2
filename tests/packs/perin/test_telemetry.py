"""PerinMetrics: seed 002's counters, read back through OpenTelemetry's in-memory reader."""

import json
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the perin extra is not installed")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from tether.execution import Executor
from tether.packs.perin import PerinMetrics, perin_pack
from tether.types import OkEnvelope

from .conftest import People

pytestmark = pytest.mark.anyio

WINDOW: dict[str, Any] = {"startWindow": "2026-03-27T12:00:00", "endWindow": "2026-03-27T14:00:00"}


def points(reader: InMemoryMetricReader) -> dict[str, list[tuple[dict[str, Any], Any]]]:
    """Each metric's data points as `(attributes, value)`; a histogram's value is `(count, sum)`."""
    data = reader.get_metrics_data()
    assert data is not None
    found: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    if value is None:
                        value = (getattr(point, "count", 0), getattr(point, "sum", 0))
                    found.setdefault(metric.name, []).append((dict(point.attributes or {}), value))
    return found


async def test_calls_needs_failures_and_time_to_confirm_are_counted(people: People) -> None:
    reader = InMemoryMetricReader()
    metrics = PerinMetrics(MeterProvider(metric_readers=[reader]))
    executor = Executor(perin_pack(people.network), journal=people.network.journal, recorders=[metrics])
    await people.call("network_schedule_meeting", executor=executor, counterpart="Aviad", **WINDOW)  # needs
    proposed = await people.call(
        "network_schedule_meeting", executor=executor, counterpart="Aviad", durationMins=30, **WINDOW
    )
    assert isinstance(proposed, OkEnvelope)
    await people.call("network_schedule_meeting", executor=executor, counterpart="Nobody", durationMins=30)
    session: str = proposed.data["sessionId"]
    await people.call("network_confirm_meeting", executor=executor, sessionId=session, selectionIndex=0)
    seen = points(reader)
    schedule = "network_schedule_meeting"
    assert sorted((a["outcome"], v) for a, v in seen["perin.tool_calls"] if a["tool"] == schedule) == [
        ("error", 1),
        ("needs", 1),
        ("ok", 1),
    ]
    assert seen["perin.missing_field_loops"] == [({"tool": schedule, "field": "durationMins"}, 1)]
    assert seen["perin.tool_failures"] == [({"tool": schedule, "code": "NOT_FOUND"}, 1)]
    [(_, (count, total))] = seen["perin.time_to_confirm"]
    assert (count, total) == (1, 0)  # the pinned clock: confirmed the moment it was proposed
    assert metrics.success_rate(schedule) == pytest.approx(1 / 3)
    assert metrics.success_rate("network_confirm_meeting") == 1.0
    assert metrics.success_rate("notifications_list") is None


async def test_tether_audit_stats_reads_the_same_database(people: People, database_url: str) -> None:
    """The network shares the journal's database, so `tether audit stats --db URL` is Perin's stats view."""
    from typer.testing import CliRunner

    from tether.cli import app

    await people.call("network_schedule_meeting", counterpart="Aviad", **WINDOW)
    await people.call("network_schedule_meeting", counterpart="Aviad", durationMins=30, **WINDOW)
    await people.call("network_schedule_meeting", counterpart="Nobody", durationMins=30)
    result = CliRunner().invoke(app, ["audit", "stats", "--db", database_url, "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert (stats["calls"], stats["ok"], stats["needs"], stats["needs_resolved"]) == (3, 1, 1, 1)
    assert stats["failure_reasons"] == {"NOT_FOUND": 1}
    assert stats["tools"]["network_schedule_meeting"]["calls"] == 3
