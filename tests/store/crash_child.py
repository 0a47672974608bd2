"""A process that starts one mutating call and blocks inside the tool, to be SIGKILLed by test_crash.py.

Usage: python crash_child.py JOURNAL_URL MARKER_PATH
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import anyio

from tether.execution import Executor, Run
from tether.store import SqlJournal
from tether.tools import Toolset, tool
from tether.types import ToolCall

state = {"marker": Path("marker")}
"""`marker`: where the tool notes each time it starts; set by `main` (in the child) or by the test."""
RELEASE = threading.Event()
"""Lets the tool finish; nobody sets it in the child, which blocks until it is killed."""

CALL = ToolCall(id="call-1", name="transfer", arguments={"to": "bob", "cents": 500}, why="Pay Bob for lunch")
SESSION = "session-1"


@tool
def transfer(to: str, cents: int) -> str:
    """Moves money: mutating, so never repeated blindly."""
    with state["marker"].open("a") as f:
        f.write("ran\n")
    RELEASE.wait()
    return f"sent {cents} to {to}"


TOOLS = Toolset(transfer)


async def main(url: str, marker: str) -> None:
    state["marker"] = Path(marker)
    executor = Executor(TOOLS, journal=SqlJournal(url))
    await executor.execute(CALL, Run(session_id=SESSION))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
