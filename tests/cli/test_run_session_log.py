"""`tether run --session-log PATH` and `tether chat --session-log PATH` keep MOOLLM's session-log.md."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tether.cli import app
from tether.models import Model, ScriptedModel

runner = CliRunner()
CALL = '<tool_call>\n{"name": "fs.read", "arguments": {"path": "notes.txt", "why": "See the notes"}}\n</tool_call>'


def logged(log: Path) -> list[dict[str, object]]:
    return [yaml.safe_load(b.split("```")[0]) for b in log.read_text(encoding="utf-8").split("```yaml\n")[1:]]


def test_run_writes_the_session_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return ScriptedModel([CALL, "They say hello."])

    monkeypatch.setattr("tether.cli._run.model_from_name", fake_model)
    log = tmp_path / "session-log.md"
    args = ["run", "notes?", "--dialect", "hermes", "--pack", "fs", "--root", str(tmp_path)]
    result = runner.invoke(app, [*args, "--session-log", str(log)])
    assert result.exit_code == 0, result.output
    call, answer = logged(log)
    assert call["tool"] == "fs.read"
    assert call["args"] == {"path": "notes.txt", "why": "See the notes"}
    assert answer["data"] == {"content": "hello\n", "lines": 1, "truncated": False}


def test_chat_writes_the_session_log(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    header = {"cassette": 1, "native_dialect": None, "prompt": "", "dialect": "hermes", "packs": ["fs"],
              "roots": ["."]}  # fmt: skip
    turns = [{"turn": i, "chunks": [t]} for i, t in enumerate([CALL, "They say hello."])]
    cassette = tmp_path / "chat.jsonl"
    cassette.write_text("".join(json.dumps(line) + "\n" for line in [header, *turns]), encoding="utf-8")
    log = tmp_path / "session-log.md"
    result = runner.invoke(
        app, ["chat", "--replay", str(cassette), "--session-log", str(log)], input="notes?\n"
    )
    assert result.exit_code == 0, result.output
    assert [b["type"] for b in logged(log)] == ["tool_call", "tool_result"]
