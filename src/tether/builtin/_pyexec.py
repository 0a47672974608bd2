"""python.exec, the host side: hand the job to `_pyjob` in a sandbox whose workspace is a private tmpfs,
then read its result from the (capped) output. Nothing is read back from a file system the code could
shape: no symlink, FIFO, device or huge file it plants is ever opened by tether, and nothing is left to
clean up on the host.
"""

from __future__ import annotations

import ast
import secrets
from functools import cache
from pathlib import Path
from typing import Any

from tether.exceptions import ToolError
from tether.sandbox import result_data, tails
from tether.types import ErrorCode

from ._paths import Roots
from ._runner import ExecSettings, run_sandboxed
from ._text import check_text

__all__ = ["run_python"]


@cache
def _job_source() -> str:
    return Path(__file__).with_name("_pyjob.py").read_text()


def run_python(
    settings: ExecSettings, code: str, files: dict[str, str], *, timeout_s: float
) -> dict[str, Any]:
    """Run `code` with `files` in a fresh sandboxed directory; stdout, stderr, return value, artifacts."""
    check_text(code, "code")
    for name, content in files.items():
        check_text(name, "a file name")
        check_text(content, f"the file {name!r}")
    marker = f"tether-result-{secrets.token_hex(16)}:"
    job = {
        "code": code,
        "files": _checked_names(Roots([settings.workspace]), files),
        "marker": marker,
        "budget": settings.limits.output_bytes // 2,
        "sandboxed": not settings.unsandboxed,
    }
    result = run_sandboxed(
        settings, None, ["python3", "-I", "-c", _job_source()], timeout_s=timeout_s, stdin=repr(job)
    )
    data = result_data(result)
    stdout, found, section = result.stdout.rpartition("\n" + marker)
    report = _read_section(section) if found else {}
    if found:
        data["stdout"] = stdout
    if full := report.get("full"):
        limits = settings.limits
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"the code filled its disk space ({', '.join(map(str, full))}: the directory holds "
            f"{limits.workspace_bytes // 2**20} MiB, /tmp and /dev/shm {limits.tmp_bytes // 2**20} MiB)."
            f"{tails(data['stdout'], data['stderr'])}",
            suggestion="Write less: keep only results, or process the data in chunks.",
        )
    if "too_big" in report:
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"the return value is {report['too_big']} characters, over the cap of "
            f"{settings.limits.output_bytes // 2}.{tails(data['stdout'], data['stderr'])}",
            suggestion="Return a summary (counts, a sample) and write the rest to a file.",
        )
    data["return_value"] = report.get("return_value") if result.exit_code == 0 else None
    data["artifacts"] = report.get("artifacts", [])
    return data


def _checked_names(box: Roots, files: dict[str, str]) -> dict[str, str]:
    """Input files by relative path, each name held to the lexical rules of any path a model gives (the
    files are written inside the sandbox, so only the names matter)."""
    checked: dict[str, str] = {}
    for name, content in files.items():
        located = box.locate(name, what="file name")
        if not located.relative or name.startswith("/"):
            raise ToolError(
                ErrorCode.INVALID_ARGS, "a file needs a relative name", suggestion='{"data.csv": "..."}'
            )
        checked[located.relative] = content
    return checked


def _read_section(text: str) -> dict[str, Any]:
    """The job's result line; it passed through code the model wrote, so its shape is checked, not trusted."""
    try:
        loaded: object = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    report: dict[str, Any] = {k: v for k, v in loaded.items() if isinstance(k, str)}  # pyright: ignore[reportUnknownVariableType]
    raw = report.get("artifacts")
    report["artifacts"] = [
        {"path": a["path"], "size": a["size"], "content": a["content"]}
        for a in (raw if isinstance(raw, list) else [])  # pyright: ignore[reportUnknownVariableType]
        if isinstance(a, dict)
        and isinstance(a.get("path"), str)  # pyright: ignore[reportUnknownMemberType]
        and isinstance(a.get("size"), int)  # pyright: ignore[reportUnknownMemberType]
        and (a.get("content") is None or isinstance(a.get("content"), str))  # pyright: ignore[reportUnknownMemberType]
    ]
    if not isinstance(report.get("full"), list):
        report["full"] = []
    if not isinstance(report.get("too_big", 0), int):
        report.pop("too_big")
    return report
