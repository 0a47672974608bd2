"""Sessions persist as they happen; a run killed part way resumes without repeating a completed call,
and a mutating call left in doubt is refused rather than repeated."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.execution import Executor
from tether.loop import Agent, Session
from tether.models import ScriptedModel
from tether.store import SessionStore, SqlJournal
from tether.tools import tool
from tether.types import ErrorEnvelope, OkEnvelope, ToolResultMessage

pytestmark = pytest.mark.anyio
CHILD = Path(__file__).with_name("session_child.py")


def run_child_until(tmp_path: Path, stage: str, ready: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(tmp_path / "t.db"), str(tmp_path / "marker"), stage]
    )
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None, "the child exited early"
        assert time.monotonic() < deadline, "the child never reached the crash point"
        time.sleep(0.02)
    time.sleep(0.1)  # let it settle where it is (sleeping in the model or the tool)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()


def agent_after_restart(tmp_path: Path, reply: str) -> tuple[Agent, Session, ScriptedModel]:
    marker = tmp_path / "marker"

    @tool
    def book(city: str) -> str:
        with marker.open("a") as f:
            f.write(f"booked {city}\n")
        return f"booked {city}"

    journal = SqlJournal(f"sqlite:///{tmp_path / 't.db'}")
    session = Session.open("trip-1", SessionStore(journal.engine))
    model = ScriptedModel([reply])
    agent = Agent(model, [book], dialect="hermes", executor=Executor([book], journal=journal))
    return agent, session, model


async def test_a_killed_run_resumes_without_repeating_its_completed_call(tmp_path: Path) -> None:
    run_child_until(tmp_path, "after_tool", (tmp_path / "marker").with_suffix(".waiting"))
    agent, session, model = agent_after_restart(tmp_path, "Your trip to Oslo is booked.")
    assert [m.kind for m in session.messages] == ["user", "assistant", "tool_result"]
    result = await agent.resume(session)
    assert (result.output, result.reason) == ("Your trip to Oslo is booked.", "no_calls")
    assert (tmp_path / "marker").read_text() == "booked Oslo\n"  # booked once
    results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert [m.envelope for m in results] == [OkEnvelope(data="booked Oslo")]
    assert Session.open("trip-1", SessionStore(f"sqlite:///{tmp_path / 't.db'}")).messages == session.messages
    assert model.requests[0].messages[-1].kind == "user"  # the tool result, in hermes' feedback format


async def test_a_mutating_call_in_doubt_after_a_kill_is_refused_not_repeated(tmp_path: Path) -> None:
    run_child_until(tmp_path, "during_tool", tmp_path / "marker")
    agent, session, _ = agent_after_restart(tmp_path, "I could not confirm the booking; please check.")
    assert [m.kind for m in session.messages] == ["user", "assistant"]  # the call was stored before it ran
    result = await agent.resume(session)
    assert (tmp_path / "marker").read_text() == "booked Oslo\n"  # not run a second time
    (refusal,) = [m.envelope for m in session.messages if isinstance(m, ToolResultMessage)]
    assert isinstance(refusal, ErrorEnvelope)
    assert refusal.error.code == "CONFLICT"
    assert result.output == "I could not confirm the booking; please check."
