"""`SessionLog`: MOOLLM's session-log.md — one YAML block per call and one per result (seed 001 §4-5).

The model's annotations on a call become YAML comments above its `why`, as in the seed: comments are
semantic, so they are kept where a reader looks for them. Arguments and results are already redacted (by
schema and the values' echoes); a secret quoted in the why, an annotation or a repair is redacted here.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, cast

import pydantic_core
import yaml

from tether.execution._records import CallReport, marks_secret
from tether.tools import SecretText
from tether.types import OkEnvelope

__all__ = ["SessionLog", "render_entry"]


class SessionLog:
    """Appends every answered call to a markdown file (created with a title if missing)."""

    def __init__(self, path: str | Path, *, title: str = "Session log"):
        self.path = Path(path)
        self.title = title
        self._lock = threading.Lock()

    def record(self, report: CallReport) -> None:
        text = render_entry(report, at=time.time())
        with self._lock:
            new = not self.path.exists()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                if new:
                    f.write(f"# {self.title}\n\n")
                f.write(text)


def render_entry(report: CallReport, *, at: float) -> str:
    """The markdown for one call and its result; a secret value (what the tool's schemas mark) shows as
    `***` wherever the model or the tool quoted it: the why, an annotation, a repair, the result."""
    call = report.call
    known = _secrets(report)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
    why = known.text(call.why) if call.why is not None else report.arguments.get("why")
    arguments = {k: v for k, v in report.arguments.items() if k != "why"}
    lines = ["type: tool_call", f"tool: {_scalar(call.name)}", f"id: {_scalar(call.id)}"]
    if arguments or why is not None or call.annotations:
        lines.append("args:")
        lines += [f"  {line}" for line in _dump(arguments).splitlines()] if arguments else []
        for note in call.annotations:
            lines += [f"  # {line.lstrip('#').strip()}" for line in known.text(note).splitlines()]
        if why is not None:
            lines.append(f"  why: {_scalar(why)}")
    else:
        lines.append("args: {}")
    if call.repaired:
        lines.append("repairs:")
        repairs = known.json([r.model_dump(mode="json") for r in call.repairs])
        lines += [f"  {line}" for line in _dump(repairs).splitlines()]

    result: dict[str, Any] = {"type": "tool_result", "id": call.id, "status": report.status}
    if report.duration_ms is not None:
        result["duration_ms"] = round(report.duration_ms, 3)
    if report.envelope.ok:
        result |= {"ok": True, "data": report.output}
    else:  # the envelope as the journal keeps it: an error message quoting a secret is redacted
        output: Any = report.output
        result |= _without_none(cast("dict[str, Any]", output) if isinstance(output, dict) else {})
    title = f"## {stamp} · {call.name} · {report.status}"
    return f"{title}\n\n```yaml\n" + "\n".join(lines) + "\n```\n\n```yaml\n" + _dump(result) + "```\n\n"


def _secrets(report: CallReport) -> SecretText:
    """The secret values the call's run knows (the executor learned those of this call's too), or for a
    report made by hand, the values the tool's schemas took out of the call's arguments and its result."""
    known = report.run.secrets
    if known is not None and known.forms:
        return known
    known = SecretText()
    if report.spec is not None and marks_secret(report.spec):
        known.learn(report.call.arguments, report.arguments)
        if isinstance(report.envelope, OkEnvelope):
            known.learn(pydantic_core.to_jsonable_python(report.envelope.data, fallback=repr), report.output)
    return known


def _without_none(envelope: dict[str, Any]) -> dict[str, Any]:
    """The envelope's JSON without its unset fields (as `model_dump(exclude_none=True)` would give it)."""
    return {
        k: _without_none(cast("dict[str, Any]", v)) if isinstance(v, dict) and k == "error" else v
        for k, v in envelope.items()
        if v is not None
    }


def _dump(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)


def _scalar(value: Any) -> str:
    return (
        yaml.safe_dump(value, allow_unicode=True, default_flow_style=True, width=10_000)
        .removesuffix("\n...\n")
        .strip()
    )
