"""Tools that run in process isolation; a module of their own so the child process imports little."""

from __future__ import annotations

import os
from pathlib import Path

from tether.exceptions import ToolError
from tether.tools import tool
from tether.types import SandboxPolicy

ISOLATED = SandboxPolicy(isolation="process", timeout_ms=20_000)


@tool(
    side_effects="none", sandbox=SandboxPolicy(isolation="process", timeout_ms=8_000)
)  # room for a slow start
def spin(marker: str) -> str:
    """Never returns: `while True:` with no way to yield; only killing the process stops it."""
    Path(marker).write_text(str(os.getpid()))
    while True:
        pass


@tool(side_effects="none", sandbox=ISOLATED)
def isolated_add(a: int, b: int) -> dict[str, int]:
    return {"sum": a + b, "pid": os.getpid()}


@tool(side_effects="none", sandbox=ISOLATED)
def isolated_refusal(path: str) -> str:
    raise ToolError("NOT_FOUND", f"no such file: {path}", suggestion="List the directory first.")


@tool(side_effects="none", sandbox=ISOLATED)
def isolated_crash() -> str:
    raise ValueError("secret=hunter2 leaked in a message")
