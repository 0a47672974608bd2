"""Servers started as real processes that bind port 0 and print the address they listen on when ready."""

from __future__ import annotations

import gc
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

Listening = Callable[..., str]
READY = re.compile(r"(?:listening on|serving MCP at) (http://\S+)")


@pytest.fixture
def listening() -> Iterator[Listening]:
    """`listening(argv, **popen)` starts a server and returns the URL from its readiness line; every server
    started is killed at the test's end (no sleeps, no fixed ports)."""
    started: list[subprocess.Popen[str]] = []

    def start(argv: list[str], **popen: Any) -> str:
        process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, **popen
        )
        started.append(process)
        timer = threading.Timer(
            60, process.kill
        )  # a server that never gets ready fails the test, not hangs it
        timer.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                found = READY.search(line)
                if found:
                    return found.group(1)
        finally:
            timer.cancel()
        raise AssertionError(f"{Path(argv[-1]).name} exited (code {process.wait()}) before it was ready")

    yield start
    for process in started:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
    gc.collect()  # a socket left open would be reported here (and fail this test), not in a later one


def process_alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, exited but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.fixture
def alive() -> Callable[[int], bool]:
    """`alive(pid)`: whether that process still runs (a zombie does not count)."""
    return process_alive
