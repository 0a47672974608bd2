"""Processes killed (SIGKILL) at each step of a call, alone and in a group commit: on restart exactly the
interrupted calls are in doubt, and none is repeated."""

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
from crash_child import CALL, SESSION, TOOLS, call

from tether.execution import Executor, Run
from tether.store import SqlJournal
from tether.types import ErrorEnvelope, OkEnvelope

pytestmark = pytest.mark.anyio

CHILD = Path(__file__).with_name("crash_child.py")
OpenJournal = Callable[[str], SqlJournal]


def run_child(url: str, marker: Path, step: str, recipients: str = "bob") -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(CHILD), url, str(marker), step, recipients])


def wait_until(ready: Callable[[], bool], child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        assert child.poll() is None, "the child process exited early"
        assert time.monotonic() < deadline, "the child never got there"
        time.sleep(0.02)


def killed(child: subprocess.Popen[bytes]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL


def start_and_kill(url: str, marker: Path) -> None:
    child = run_child(url, marker, "tool")
    try:
        wait_until(
            lambda: marker.exists() and bool(marker.read_text()), child
        )  # in the tool: intent committed
    finally:
        killed(child)


def died_by_itself(url: str, marker: Path, step: str, recipients: str = "bob") -> None:
    child = run_child(url, marker, step, recipients)
    assert child.wait(timeout=60) == -signal.SIGKILL


def ran(marker: Path) -> list[str]:
    return marker.read_text().splitlines() if marker.exists() else []


async def test_a_call_killed_between_intent_and_result_is_in_doubt_and_not_repeated(
    journal_url: str, tmp_path: Path, open_journal: OpenJournal
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


async def test_a_call_killed_as_its_intent_commits_left_nothing_and_runs_once(
    journal_url: str, tmp_path: Path, open_journal: OpenJournal
) -> None:
    marker = tmp_path / "ran"
    died_by_itself(journal_url, marker, "claim")
    executor = Executor(TOOLS, journal=open_journal(journal_url))
    assert await executor.in_doubt() == []
    assert executor.journal.entries() == []
    assert ran(marker) == []  # the tool never started
    crash_child.state["marker"] = marker
    crash_child.RELEASE.set()
    assert await executor.execute(CALL, Run(session_id=SESSION)) == OkEnvelope(data="sent 500 to bob")
    assert ran(marker) == ["ran"]


async def test_a_call_killed_as_its_result_commits_is_in_doubt_and_not_repeated(
    journal_url: str, tmp_path: Path, open_journal: OpenJournal
) -> None:
    marker = tmp_path / "ran"
    died_by_itself(journal_url, marker, "result")
    executor = Executor(TOOLS, journal=open_journal(journal_url))
    (in_doubt,) = await executor.in_doubt()
    assert (in_doubt.kind, in_doubt.call_id) == ("intent", "call-1")
    envelope = await executor.execute(CALL, Run(session_id=SESSION))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.details == {"in_doubt": True, "intent_id": in_doubt.id}
    assert ran(marker) == ["ran"]


async def test_a_call_killed_after_its_result_committed_is_done_and_replayed(
    journal_url: str, tmp_path: Path, open_journal: OpenJournal
) -> None:
    marker = tmp_path / "ran"
    died_by_itself(journal_url, marker, "returned")
    executor = Executor(TOOLS, journal=open_journal(journal_url))
    assert await executor.in_doubt() == []
    assert await executor.execute(CALL, Run(session_id=SESSION)) == OkEnvelope(data="sent 500 to bob")
    assert ran(marker) == ["ran"]


async def test_calls_killed_in_their_tools_after_a_group_commit_are_exactly_those_in_doubt(
    journal_url: str, tmp_path: Path, open_journal: OpenJournal
) -> None:
    # four calls at once, their intents and results grouped into shared transactions: two finish, two
    # block in their tools (recipients bob*) when the process is killed
    marker = tmp_path / "ran"
    child = run_child(journal_url, marker, "tool", "carol,bob,dave,bob2")
    watcher = open_journal(journal_url)
    try:
        wait_until(
            lambda: len(ran(marker)) == 4 and sum(e.kind == "result" for e in watcher.entries()) == 2,
            child,
        )
    finally:
        killed(child)
    executor = Executor(TOOLS, journal=open_journal(journal_url))
    assert sorted(e.call_id for e in await executor.in_doubt()) == ["call-1", "call-bob2"]
    crash_child.state["marker"] = marker
    again = await executor.execute_all(
        [call(to) for to in ("carol", "bob", "dave", "bob2")], Run(session_id=SESSION)
    )
    assert again[0] == OkEnvelope(data="sent 500 to carol")
    assert again[2] == OkEnvelope(data="sent 500 to dave")
    for refused in (again[1], again[3]):
        assert isinstance(refused, ErrorEnvelope)
        assert refused.error.details is not None
        assert refused.error.details["in_doubt"] is True
    assert sorted(ran(marker)) == ["ran", "ran bob2", "ran carol", "ran dave"]  # nothing ran twice


async def test_calls_killed_as_their_grouped_intents_commit_never_ran_and_run_once(
    journal_url: str, tmp_path: Path, open_journal: OpenJournal
) -> None:
    marker = tmp_path / "ran"
    died_by_itself(journal_url, marker, "claim", "carol,dave,erin")  # dies committing >= 2 intents at once
    executor = Executor(TOOLS, journal=open_journal(journal_url))
    entries = executor.journal.entries()
    in_doubt = {e.call_id for e in await executor.in_doubt()}
    completed = {e.call_id for e in entries if e.kind == "result"}
    recorded = {e.call_id for e in entries}
    # every call the journal does not know of never started (an intent may be committed for a tool the
    # kill stopped from starting); each call it knows of is in doubt or completed
    assert len({f"call-{to}" for to in ("carol", "dave", "erin")} - recorded) >= 2
    assert {f"call-{line.split()[1]}" for line in ran(marker)} <= recorded
    assert in_doubt | completed == recorded
    assert not in_doubt & completed
    crash_child.state["marker"] = marker
    crash_child.RELEASE.set()
    again = await executor.execute_all(
        [call(to) for to in ("carol", "dave", "erin")], Run(session_id=SESSION)
    )
    for to, envelope in zip(("carol", "dave", "erin"), again, strict=True):
        if f"call-{to}" in in_doubt:
            assert isinstance(envelope, ErrorEnvelope)
        else:
            assert envelope == OkEnvelope(data=f"sent 500 to {to}")
    assert sorted(set(ran(marker))) == sorted(ran(marker))  # nothing ran twice


async def test_a_call_in_doubt_resolved_as_done_replays_the_resolution(
    journal_url: str, tmp_path: Path, open_journal: OpenJournal
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
    journal_url: str, tmp_path: Path, open_journal: OpenJournal
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
