"""`tether chat`: lines typed in, each a turn of one continuing conversation, tools shown as they run."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.cli import app
from tether.models import FunctionModel, Model, ModelRequest, ScriptedModel
from tether.types import AssistantMessage, SystemMessage, UserMessage

runner = CliRunner()


def read_call(path: str, why: str) -> str:
    return (
        f'<tool_call>\n{{"name": "fs.read", "arguments": {{"path": "{path}", "why": "{why}"}}}}\n</tool_call>'
    )


def cassette(path: Path, turns: list[str]) -> Path:
    header = {
        "cassette": 1,
        "native_dialect": None,
        "prompt": "",
        "dialect": "hermes",
        "packs": ["fs"],
        "roots": ["."],
    }
    lines = [
        header,
        *({"turn": i, "chunks": [t[j : j + 7] for j in range(0, len(t), 7)]} for i, t in enumerate(turns)),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_replayed_chat_shows_each_tool_call_its_why_its_envelope_and_the_streamed_reply(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("hello tether\n", encoding="utf-8")
    turns = [
        read_call("notes.txt", "Find out what the notes say"),
        "The notes say hello tether.",
        "You asked me about the notes.",
    ]
    recorded = cassette(tmp_path / "chat.jsonl", turns)
    result = runner.invoke(
        app, ["chat", "--replay", str(recorded)], input="what do my notes say?\nwhat did I ask?\n"
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert '→ fs.read({"path": "notes.txt"})  why: Find out what the notes say' in out
    assert '✓ {"content": "hello tether\\n", "lines": 1, "truncated": false}' in out
    assert "The notes say hello tether.\n" in out
    assert out.index("✓") < out.index("The notes say") < out.index("You asked me about the notes.")


def test_each_line_continues_the_conversation(monkeypatch: pytest.MonkeyPatch) -> None:
    requests: list[ModelRequest] = []

    def reply(request: ModelRequest) -> str:
        requests.append(request)
        said = [m.content for m in request.messages if isinstance(m, UserMessage)]
        return f"turn {len(requests)}: you said {' then '.join(said)}"

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return FunctionModel(reply, name=f"fake:{name}")

    monkeypatch.setattr("tether.cli._chat.model_from_name", fake_model)
    result = runner.invoke(
        app, ["chat", "--model", "x:y", "--system", "Be brief."], input="hi\n\nmore\n/exit\nnever\n"
    )
    assert result.exit_code == 0, result.output
    assert "with fake:x:y" in result.output
    assert "turn 1: you said hi\n" in result.output
    assert "turn 2: you said hi then more\n" in result.output
    assert len(requests) == 2  # nothing after /exit runs; the empty line is skipped
    assert requests[1].messages == [
        SystemMessage(content="Be brief."),
        UserMessage(content="hi"),
        AssistantMessage(content="turn 1: you said hi"),  # as text dialects send it: the raw reply
        UserMessage(content="more"),
    ]


def test_a_failed_turn_is_reported_and_the_chat_goes_on_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    requests: list[ModelRequest] = []

    def reply(request: ModelRequest) -> str:
        requests.append(request)
        if len(requests) == 1:
            raise ConnectionError("the server went away")
        return "back"

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return FunctionModel(reply)

    monkeypatch.setattr("tether.cli._chat.model_from_name", fake_model)
    result = runner.invoke(app, ["chat"], input="first\nsecond\n")
    assert result.exit_code == 0, result.output
    assert "error: ConnectionError: " in result.output
    assert "back\n" in result.output
    assert [m.content for m in requests[1].messages if isinstance(m, UserMessage)] == ["second"]


def test_a_cassette_that_runs_out_is_one_clear_error(tmp_path: Path) -> None:
    recorded = cassette(tmp_path / "short.jsonl", ["only one answer"])
    result = runner.invoke(app, ["chat", "--replay", str(recorded)], input="one\ntwo\n")
    assert result.exit_code == 2
    assert "ran out of turns" in result.output


def append_call(path: str, text: str) -> str:
    call = {"name": "fs.append", "arguments": {"path": path, "text": text, "why": "Keep the user's note"}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"


def scripted_chat(monkeypatch: pytest.MonkeyPatch, *turns: str) -> ScriptedModel:
    model = ScriptedModel(list(turns))

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return model

    monkeypatch.setattr("tether.cli._chat.model_from_name", fake_model)
    return model


def test_confirm_asks_before_each_call_with_side_effects_and_a_no_is_told_to_the_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    turns = [append_call("a.txt", "one\n"), "Wrote it.", append_call("b.txt", "two\n"), "I will not, then."]
    model = scripted_chat(monkeypatch, *turns)
    args = ["chat", "--dialect", "hermes", "--pack", "fs", "--root", str(tmp_path), "--confirm"]
    result = runner.invoke(app, args, input="note one\ny\nnote two\nn\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("? [y/N] ") == 2
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "one\n"
    assert not (tmp_path / "b.txt").exists()
    assert "✗ PERMISSION_DENIED The user did not approve this call to fs.append." in result.output
    feedback = model.requests[3].messages[-1]
    assert isinstance(feedback, UserMessage)
    assert "Ask the user what they would like instead" in feedback.content


def test_a_turn_stopped_by_a_limit_says_so_and_the_chat_goes_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    scripted_chat(monkeypatch, append_call("a.txt", "one\n"), "Hello again.")
    args = ["chat", "--dialect", "hermes", "--pack", "fs", "--root", str(tmp_path), "--max-turns", "1"]
    result = runner.invoke(app, args, input="note it\nhello\n")
    assert result.exit_code == 0, result.output
    assert "error: the run stopped at its limit of 1 model turn (max_iterations)" in result.output
    assert "--max-turns 2" in result.output
    assert "Hello again.\n" in result.output
