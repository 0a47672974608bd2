"""The bridge from code-running tools to `tether.sandbox`: gating (autoexec), refusals as envelopes."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tether.exceptions import ToolError
from tether.sandbox import Sandbox, SandboxLimits, SandboxResult, run_for_tool
from tether.types import ErrorCode

__all__ = ["ExecSettings", "program_hint", "run_sandboxed"]


@dataclass(frozen=True, kw_only=True)
class ExecSettings:
    """How one agent's code-running tools run."""

    workspace: Path
    enabled: bool = False
    """Autoexec: off unless the agent's configuration turns it on (seed 000)."""
    network: bool = False
    unsandboxed: bool = False
    limits: SandboxLimits = field(default_factory=SandboxLimits)

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
    return run_for_tool(
        sandbox,
        argv,
        cwd=cwd,
        timeout_s=timeout_s,
        stdin=stdin,
        env=env,
        flood_hint="Redirect output to a file in the workspace and read parts of it with fs.read.",
    )


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
