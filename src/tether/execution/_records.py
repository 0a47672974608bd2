"""What the executor tells recorders about every answered call, and Kalygo's record of it (seed 004)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import pydantic_core

from tether import _wire
from tether.execution._run import Run
from tether.tools import redact
from tether.types import (
    AnyEnvelope,
    ErrorEnvelope,
    NeedsEnvelope,
    OkEnvelope,
    ToolCall,
    ToolCallRecord,
    ToolSpec,
)

__all__ = ["CallReport", "Recorder", "echo_free", "kalygo_record", "marks_secret", "tool_type"]


@dataclass(frozen=True, slots=True)
class CallReport:
    """One answered call, with secrets already redacted from `arguments` and `output` (by the tool's schemas,
    and wherever the values taken out are echoed, as the journal keeps them: `echo_free`)."""

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


def marks_secret(spec: ToolSpec) -> bool:
    """Whether the tool's input or output schema marks anything secret (remembered per schema by `redact`)."""
    probe: dict[str, Any] = {}  # `redact` returns it itself iff the schema marks nothing secret
    if redact(probe, spec.input_schema) is not probe:
        return True
    return bool(spec.output_schema) and redact(probe, spec.output_schema) is not probe


def echo_free(
    run: Run,
    envelope: AnyEnvelope,
    envelope_json: dict[str, Any],
    trace: str | None,
    *,
    learn: bool,
) -> tuple[dict[str, Any], str | None]:
    """A result as the journal and the records keep it: `envelope_json` (its data already redacted by the
    output schema) and the traceback, with every secret the run knows (`Run.secrets`: the call's own among
    them, learned with its arguments) taken out where it is echoed: a plain field of the result, an error
    message or a traceback quoting the call (as text, JSON- or HTML-escaped; see `SecretText`). With
    `learn` (the tool's output schema marks something secret), the values it took out of the result's data
    are learned first."""
    known = run.known_secrets()
    if learn and isinstance(envelope, OkEnvelope) and "data" in envelope_json:
        known.learn(pydantic_core.to_jsonable_python(envelope.data, fallback=repr), envelope_json["data"])
    if not known:
        return envelope_json, trace
    shown: dict[str, Any] = known.json(envelope_json, keys=False)  # the envelope's shape stays
    if "data" in envelope_json:
        shown["data"] = known.json(envelope_json["data"])
    return shown, None if trace is None else known.text(trace)
