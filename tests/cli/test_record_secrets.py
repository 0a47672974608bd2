"""`tether run --record` saves the model's output verbatim, secrets included; the journal beside it does not.

A cassette exists to be replayed: `tether replay` feeds the same output through the real parser, executor and
tools, so a password the model passed to a tool must be in it (the replay below logs in with it again). Stars
in its place would replay a different call. The journal of the same run holds `***`.
"""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.cli import app
from tether.models import Model, ScriptedModel

runner = CliRunner()
PASSWORD = "Zq9Kx7-correct-horse"

TOOL_FILE = '''
from pathlib import Path
from typing import Annotated

from pydantic import Field

from tether import tool


@tool(side_effects="none")
def login(user: str, password: Annotated[str, Field(json_schema_extra={"format": "password"})]) -> str:
    """Log in."""
    with (Path(__file__).parent / "received.txt").open("a") as f:
        f.write(password + "\\n")
    return f"welcome {user}"
'''


def login_call() -> str:
    call = {"name": "login", "arguments": {"user": "ada", "password": PASSWORD}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"


def stored_bytes(database: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (database, Path(f"{database}-wal")) if p.exists())


def test_a_cassette_keeps_the_secret_it_replays_while_the_journal_keeps_stars(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "bank.py").write_text(TOOL_FILE)
    model = ScriptedModel([login_call(), "Logged in."])

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return model

    monkeypatch.setattr("tether.cli._run.model_from_name", fake_model)
    cassette, database = tmp_path / "login.jsonl", tmp_path / "runs.db"
    options = [
        "--dialect",
        "hermes",
        "--tools",
        str(tmp_path / "bank.py"),
        "--journal",
        f"sqlite:///{database}",
    ]
    recorded = runner.invoke(app, ["run", "Log me in", *options, "--record", str(cassette)])
    assert recorded.exit_code == 0, recorded.output

    assert PASSWORD.encode() not in stored_bytes(database)
    assert "login" in recorded.output
    assert PASSWORD not in recorded.output  # the terminal shows the call with `***`: a scrollback keeps it
    turns = [json.loads(line) for line in cassette.read_text().splitlines()[1:]]
    said = ["".join(c for c in turn["chunks"] if isinstance(c, str)) for turn in turns]
    assert PASSWORD in said[0]  # verbatim (split across chunks as it streamed), by design: docs/sessions.md

    replayed = runner.invoke(app, ["replay", str(cassette)])
    assert replayed.exit_code == 0, replayed.output
    assert PASSWORD not in replayed.output
    assert (tmp_path / "received.txt").read_text().splitlines() == [PASSWORD, PASSWORD]
