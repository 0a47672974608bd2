"""Attacks on what `tether run` leaves behind: the terminal (a scrollback, a screen share or a `tee` log keeps
what it shows, `--confirm`'s question included), `--session-log` (MOOLLM's session-log.md), the journal and
what `tether audit` prints from it. A login tool's schema marks its password and its result's token secret;
the model copies the password into a plain argument and its why, the tool echoes it, and the model repeats
both in its answer. The tool still gets the password."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.cli import app
from tether.models import Model, ScriptedModel

runner = CliRunner()
PASSWORD = "Zq9Kx7-correct-horse"
TOKEN = "TOK-5f1e9c07d2b84a"

TOOL_FILE = '''
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from tether import ToolError, tool

Secret = Annotated[str, Field(json_schema_extra={"format": "password"})]


class Session(BaseModel):
    greeting: str
    token: Secret


@tool(side_effects="mutating")
def login(user: str, password: Secret, note: str = "") -> Session:
    """Log in."""
    with (Path(__file__).parent / "received.txt").open("a") as f:
        f.write(password + "\\n")
    if user == "eve":
        raise ToolError("DENIED", f"{user} may not log in with {password}")
    return Session(greeting=f"welcome {user}, {password} works", token="TOK-5f1e9c07d2b84a")
'''


def login_call(user: str = "ada") -> str:
    arguments = {"user": user, "password": PASSWORD, "note": f"pw is {PASSWORD}", "why": f"try {PASSWORD}"}
    return f"<tool_call>\n{json.dumps({'name': 'login', 'arguments': arguments})}\n</tool_call>"


def stored_bytes(database: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (database, Path(f"{database}-wal")) if p.exists())


def leaks(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [s for s in (PASSWORD, TOKEN) if s.encode() in data]


def test_the_terminal_the_session_log_the_journal_and_audit_show_no_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "bank.py").write_text(TOOL_FILE)
    model = ScriptedModel([login_call(), login_call("eve"), f"Logged in: {TOKEN} with {PASSWORD}."])

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return model

    monkeypatch.setattr("tether.cli._run.model_from_name", fake_model)
    monkeypatch.setattr("tether.cli._run._at_terminal", lambda: True)  # --confirm asks
    database, log = tmp_path / "runs.db", tmp_path / "session-log.md"
    result = runner.invoke(
        app,
        [
            *("run", "Log me in", "--dialect", "hermes", "--tools", str(tmp_path / "bank.py")),
            *("--journal", f"sqlite:///{database}", "--session-log", str(log), "--confirm"),
        ],
        input="y\ny\n",
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "received.txt").read_text().splitlines() == [PASSWORD, PASSWORD]

    assert leaks(result.output) == [], result.output
    assert "allow login(" in result.output  # --confirm asked, with stars
    assert '"password": "***"' in result.output
    assert '"note": "pw is ***"' in result.output
    assert "Logged in: *** with ***." in result.output
    assert "DENIED" in result.output
    assert leaks(log.read_text()) == []
    assert "token: '***'" in log.read_text()
    assert leaks(stored_bytes(database)) == []

    tail = runner.invoke(app, ["audit", "tail", "--db", f"sqlite:///{database}"])
    assert tail.exit_code == 0, tail.output
    assert "login" in tail.output
    assert leaks(tail.output) == []
    for call_id in ("call_0@1", "call_0@2"):
        shown = runner.invoke(app, ["audit", "show", call_id, "--db", f"sqlite:///{database}"])
        assert shown.exit_code == 0, shown.output
        assert leaks(shown.output) == []
