"""A process killed (SIGKILL) between intent and result: on restart the call is in doubt and not repeated."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import crash_child
import pytest
from crash_child import CALL, SESSION, TOOLS

from tether.execution import Executor, Run
from tether.store import SqlJournal
from tether.types import ErrorEnvelope, OkEnvelope

pytestmark = pytest.mark.anyio

CHILD = Path(__file__).with_name("crash_child.py")


def start_and_kill(url: str, marker: Path) -> None:
    child = subprocess.Popen([sys.executable, str(CHILD), url, str(marker)])
    try:
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text()):  # the tool started, so its intent is committed
            assert child.poll() is None, "the child process exited early"
            assert time.monotonic() < deadline, "the child never reached the tool"
            time.sleep(0.02)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL


async def test_a_call_killed_between_intent_and_result_is_in_doubt_and_not_repeated(
    journal_url: str, tmp_path: Path, open_journal: Callable[[str], SqlJournal]
) -> None:
    marker = tmp_path / "ran"
    start_and_kill(journal_url, marker)

    executor = Executor(TOOLS, journal=open_journal(journal_url))
    (in_doubt,) = await executor.in_doubt()
    assert (in_doubt.kind, in_doubt.call_id, in_doubt.tool, in_doubt.why) == (
        "intent",
        "call-1",
        "transfer",
        "Pay Bob for lunch",
    )
    envelope = await executor.execute(CALL, Run(session_id=SESSION))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "CONFLICT"
    assert envelope.error.details == {"in_doubt": True, "intent_id": in_doubt.id}
    assert not envelope.error.recoverable
    assert marker.read_text() == "ran\n"  # not run again


async def test_a_call_in_doubt_resolved_as_done_replays_the_resolution(
    journal_url: str, tmp_path: Path, open_journal: Callable[[str], SqlJournal]
) -> None:
    marker = tmp_path / "ran"
    start_and_kill(journal_url, marker)
    executor = Executor(TOOLS, journal=open_journal(journal_url))
    (in_doubt,) = await executor.in_doubt()
    await executor.resolve(in_doubt, envelope=OkEnvelope(data="sent 500 to bob"), note="checked the bank")
    assert await executor.in_doubt() == []
    assert await executor.execute(CALL, Run(session_id=SESSION)) == OkEnvelope(data="sent 500 to bob")
    assert marker.read_text() == "ran\n"


async def test_a_call_in_doubt_resolved_as_not_done_may_run_again(
    journal_url: str, tmp_path: Path, open_journal: Callable[[str], SqlJournal]
) -> None:
    marker = tmp_path / "ran"
    start_and_kill(journal_url, marker)
    executor = Executor(TOOLS, journal=open_journal(journal_url))
    (in_doubt,) = await executor.in_doubt()
    await executor.resolve(in_doubt, note="the bank never saw it")
    assert [e.kind for e in executor.journal.entries()] == ["intent", "resolution"]
    crash_child.state["marker"] = marker
    crash_child.RELEASE.set()
    assert await executor.execute(CALL, Run(session_id=SESSION)) == OkEnvelope(data="sent 500 to bob")
    assert marker.read_text() == "ran\nran\n"
