"""MOOLLM's session-log.md, switched on from the Agent: every answered call of a run, refusals included."""

from pathlib import Path

import pytest
import yaml

from tether.exceptions import UserError
from tether.execution import Executor
from tether.loop import Agent
from tether.models import ScriptedModel
from tether.tools import tool

pytestmark = pytest.mark.anyio


@tool(name="fs.read", side_effects="none", requires_why=True)
def read(path: str) -> str:
    return "# Notes"


def call(why: str | None) -> str:
    args = "  path: notes.md\n  # part of the audit\n" + (f"  why: {why}\n" if why else "")
    return f"```yaml\ntype: tool_call\ntool: fs.read\nargs:\n{args}```"


async def test_an_agent_given_a_session_log_appends_each_call_and_result(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "session-log.md"
    model = ScriptedModel([call(None), call("Check the notes"), "Read it."])
    agent = Agent(model, [read], dialect="yaml", session_log=log)
    await agent.run("Read my notes")
    text = log.read_text(encoding="utf-8")
    assert text.startswith("# Session log\n\n## ")
    blocks = [yaml.safe_load(b.split("```")[0]) for b in text.split("```yaml\n")[1:]]
    assert [(b["type"], b.get("status")) for b in blocks] == [
        ("tool_call", None),
        ("tool_result", "refused"),
        ("tool_call", None),
        ("tool_result", "ran"),
    ]
    assert blocks[1]["error"]["code"] == "MISSING_WHY"
    assert blocks[2]["args"] == {"path": "notes.md", "why": "Check the notes"}
    assert "  # part of the audit\n  why: Check the notes\n" in text
    assert blocks[3]["data"] == "# Notes"


def test_a_session_log_with_a_configured_executor_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"recorders=\[SessionLog\(path\)\]"):
        Agent(ScriptedModel([]), [read], executor=Executor([read]), session_log=tmp_path / "log.md")
