"""What the executor tells recorders about every answered call, and Kalygo's record of it (seed 004)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from tether import _wire
from tether.execution._run import Run
from tether.types import ErrorEnvelope, NeedsEnvelope, OkEnvelope, ToolCall, ToolCallRecord, ToolSpec

__all__ = ["CallReport", "Recorder", "kalygo_record", "tool_type"]


@dataclass(frozen=True, slots=True)
class CallReport:
    """One answered call, with secrets already redacted from `arguments` and `output`."""

    call: ToolCall
    spec: ToolSpec | None
    """`None` when the call named no known tool."""
    run: Run
    status: Literal["ran", "refused", "replayed"]
    envelope: OkEnvelope | NeedsEnvelope | ErrorEnvelope
    arguments: dict[str, Any]
    output: Any
    """The envelope as JSON: `data` for an ok envelope, the whole envelope otherwise."""
    duration_ms: float | None = None


class Recorder(Protocol):
    """Receives a report of every answered call, e.g. `SessionLog` writing MOOLLM's session-log.md.

    Called from a worker thread, in the order calls finish.
    """

    def record(self, report: CallReport) -> None: ...


def kalygo_record(report: CallReport) -> ToolCallRecord:
    """Kalygo's `{toolType, toolName, input, output}` for a call; `toolType` from the spec's metadata
    (`toolType`), else its category, else `"function"`."""
    return _wire.record(tool_type(report.spec), report.call.name, report.arguments, report.output)


def tool_type(spec: ToolSpec | None) -> str:
    """Kalygo's `toolType` for calls to a tool with this spec (`None`: no such tool)."""
    if spec is None:
        return "unknown"
    return str(spec.metadata.get("toolType") or spec.category or "function")
