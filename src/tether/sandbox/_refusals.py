"""What stops a sandboxed run, as the `ToolError` a code-running tool answers with: one wording for every
tool that runs code (the built-in exec pack, YAML command tools, sandboxed Python bindings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tether.exceptions import SandboxUnavailable, ToolError
from tether.types import ErrorCode

from ._limits import BadCommand, SandboxResult
from ._sandbox import Sandbox

__all__ = ["result_data", "run_for_tool", "tails"]

_TAIL = 2000


def run_for_tool(
    sandbox: Sandbox,
    argv: Sequence[str],
    *,
    cwd: str = ".",
    timeout_s: float,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    flood_hint: str = "Ask for less in one call (a narrower input).",
    slow_hint: str = "Make it faster or do less per call",
) -> SandboxResult:
    """Run `argv` in `sandbox`; a run that could not start or was stopped raises the ToolError the model
    reads: `SANDBOX_UNAVAILABLE`, `NOT_FOUND` (a missing program, unsandboxed only), `QUOTA_EXCEEDED` for
    an OOM kill of the tree, changes to the workspace past its quota or an output flood, `TIMEOUT` with the whole tree killed. `flood_hint` and
    `slow_hint` are the suggestions for a flood and a timeout, which depend on what the tool offers."""
    try:
        result = sandbox.run(argv, cwd=cwd, timeout_s=timeout_s, stdin=stdin, env=env)
    except SandboxUnavailable as exc:
        raise ToolError(
            "SANDBOX_UNAVAILABLE",
            f"code cannot run sandboxed here: {exc}",
            recoverable=False,
            suggestion="Tell the user: install bubblewrap (apt-get install bubblewrap) to run code safely.",
        ) from None
    except BadCommand as exc:
        raise ToolError(
            ErrorCode.INVALID_ARGS,
            f"{exc}.",
            suggestion="Put long or binary input in a file in the workspace and have the command read it.",
        ) from None
    except FileNotFoundError as exc:  # unsandboxed only: a missing program
        raise ToolError(ErrorCode.NOT_FOUND, f"no such program: {exc.filename}") from None
    limits = sandbox.limits
    if result.oom_killed:  # first: a tree short of memory may then crawl into its timeout
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"its processes together passed {limits.memory_bytes // 2**20} MiB of memory, so the kernel "
            f"killed at least one of them.{tails(result.stdout, result.stderr)}",
            suggestion="Use less memory: process the data in chunks, or start fewer processes.",
        )
    if result.quota_exceeded:
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"{result.quota_exceeded}, so none of its changes to the workspace were kept (exit code "
            f"{result.exit_code}).{tails(result.stdout, result.stderr)}",
            suggestion="Write less into the workspace: keep only results, delete what you no longer need.",
        )
    if result.timed_out:
        raise ToolError(
            ErrorCode.TIMEOUT,
            f"stopped after {timeout_s:g} s; the whole process tree was killed."
            f"{tails(result.stdout, result.stderr)}",
            suggestion=f"{slow_hint} (the limit is {limits.timeout_s:g} s).",
        )
    if result.truncated:
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"output passed {limits.output_bytes} bytes, so the command was stopped."
            f"{tails(result.stdout, result.stderr)}",
            suggestion=flood_hint,
        )
    return result


def result_data(result: SandboxResult) -> dict[str, Any]:
    """A finished run as a tool's result."""
    return {
        "stdout": result.stdout,
        "stderr": result.stderr,
        "exit_code": result.exit_code,
        "duration_ms": result.duration_ms,
    }


def tails(stdout: str, stderr: str) -> str:
    """The ends of both outputs, for a message about a run that was stopped."""
    return "".join(
        f"\n{name} (last {_TAIL} chars):\n{text[-_TAIL:]}"
        for name, text in (("stdout", stdout), ("stderr", stderr))
        if text
    )
