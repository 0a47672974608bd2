"""`SessionLog`: MOOLLM's session-log.md — one YAML block per call and one per result (seed 001 §4-5).

The model's annotations on a call become YAML comments above its `why`, as in the seed: comments are
semantic, so they are kept where a reader looks for them. Arguments are already redacted.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import yaml

from tether.execution._records import CallReport

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
    """The markdown for one call and its result."""
    call = report.call
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
    why = call.why if call.why is not None else report.arguments.get("why")
    arguments = {k: v for k, v in report.arguments.items() if k != "why"}
    lines = ["type: tool_call", f"tool: {_scalar(call.name)}", f"id: {_scalar(call.id)}"]
    if arguments or why is not None or call.annotations:
        lines.append("args:")
        lines += [f"  {line}" for line in _dump(arguments).splitlines()] if arguments else []
        for note in call.annotations:
            lines += [f"  # {line.lstrip('#').strip()}" for line in note.splitlines()]
        if why is not None:
            lines.append(f"  why: {_scalar(why)}")
    else:
        lines.append("args: {}")
    if call.repaired:
        lines.append("repairs:")
        lines += [
            f"  {line}" for line in _dump([r.model_dump(mode="json") for r in call.repairs]).splitlines()
        ]

    result: dict[str, Any] = {"type": "tool_result", "id": call.id, "status": report.status}
    if report.duration_ms is not None:
        result["duration_ms"] = round(report.duration_ms, 3)
    if report.envelope.ok:
        result |= {"ok": True, "data": report.output}
    else:
        result |= report.envelope.model_dump(mode="json", exclude_none=True)
    title = f"## {stamp} · {call.name} · {report.status}"
    return f"{title}\n\n```yaml\n" + "\n".join(lines) + "\n```\n\n```yaml\n" + _dump(result) + "```\n\n"


def _dump(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)


def _scalar(value: Any) -> str:
    return (
        yaml.safe_dump(value, allow_unicode=True, default_flow_style=True, width=10_000)
        .removesuffix("\n...\n")
        .strip()
    )
