"""The bridge from code-running tools to `tether.sandbox`: gating (autoexec), refusals as envelopes."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.exceptions import ToolError
from tether.sandbox import Limits, Sandbox, SandboxResult, SandboxUnavailable
from tether.types import ErrorCode

__all__ = ["ExecSettings", "result_data", "run_sandboxed", "tails"]

_TAIL = 2000


@dataclass(frozen=True, kw_only=True)
class ExecSettings:
    """How one agent's code-running tools run."""

    workspace: Path
    enabled: bool = False
    """Autoexec: off unless the agent's configuration turns it on (seed 000)."""
    network: bool = False
    unsandboxed: bool = False
    limits: Limits = field(default_factory=Limits)

    def check_enabled(self, tool: str) -> None:
        if not self.enabled:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                f"{tool} is disabled: code execution (autoexec) is off for this agent",
                recoverable=False,
                suggestion="Ask the user to enable code execution for this agent; until then use the fs tools.",
            )

    def timeout_s(self, timeout_ms: int) -> float:
        if timeout_ms <= 0:
            raise ToolError(ErrorCode.INVALID_ARGS, "timeout_ms must be positive", suggestion="e.g. 30000")
        return min(timeout_ms / 1000, self.limits.timeout_s)


def run_sandboxed(
    settings: ExecSettings,
    workspace: Path | None,
    argv: Sequence[str],
    *,
    cwd: str = ".",
    timeout_s: float,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
) -> SandboxResult:
    """Run in a sandbox on `workspace` (`None`: a private tmpfs); refusals become ToolErrors the model can
    act on: a timeout, an output flood and an OOM kill of the tree each end the call."""
    sandbox = Sandbox(
        workspace, network=settings.network, limits=settings.limits, unsandboxed=settings.unsandboxed
    )
    try:
        result = sandbox.run(argv, cwd=cwd, timeout_s=timeout_s, stdin=stdin, env=env)
    except SandboxUnavailable as exc:
        raise ToolError(
            "SANDBOX_UNAVAILABLE",
            f"code cannot run sandboxed here: {exc}",
            recoverable=False,
            suggestion="Tell the user: install bubblewrap (apt-get install bubblewrap) to run code safely.",
        ) from None
    except FileNotFoundError as exc:  # unsandboxed only: a missing program
        raise ToolError(ErrorCode.NOT_FOUND, f"no such program: {exc.filename}") from None
    if result.oom_killed:  # first: a tree short of memory may then crawl into its timeout
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"its processes together passed {settings.limits.memory_bytes // 2**20} MiB of memory, so the kernel "
            f"killed at least one of them.{_tails(result)}",
            suggestion="Use less memory: process the data in chunks, or start fewer processes.",
        )
    if result.timed_out:
        raise ToolError(
            ErrorCode.TIMEOUT,
            f"stopped after {timeout_s:g} s; the whole process tree was killed.{_tails(result)}",
            suggestion=f"Make it faster or do less per call (the limit is {settings.limits.timeout_s:g} s).",
        )
    if result.truncated:
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"output passed {settings.limits.output_bytes} bytes, so the command was stopped.{_tails(result)}",
            suggestion="Redirect output to a file in the workspace and read parts of it with fs.read.",
        )
    return result


def result_data(result: SandboxResult) -> dict[str, Any]:
    return {
        "stdout": result.stdout,
        "stderr": result.stderr,
        "exit_code": result.exit_code,
        "duration_ms": result.duration_ms,
    }


def _tails(result: SandboxResult) -> str:
    return tails(result.stdout, result.stderr)


def tails(stdout: str, stderr: str) -> str:
    """The ends of both outputs, for a message about a run that was stopped."""
    parts = [
        f"\n{name} (last {_TAIL} chars):\n{text[-_TAIL:]}"
        for name, text in (("stdout", stdout), ("stderr", stderr))
        if text
    ]
    return "".join(parts)


def program_hint(argv: Sequence[str]) -> str | None:
    """A clearer message for bwrap's `execvp ...: No such file or directory`."""
    if (
        argv
        and "/" not in argv[0]
        and not any(
            os.access(os.path.join(d, argv[0]), os.X_OK) for d in ("/usr/local/bin", "/usr/bin", "/bin")
        )
    ):
        return f"no program named {argv[0]!r} is installed in the sandbox"
    return None
