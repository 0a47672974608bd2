"""`tether run`: how a run ends (done, or stopped at a limit), bad input, and the options that guard tools:
`--journal` for `tether audit`, `--read-only`, `--confirm`."""

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from tether.cli import app
from tether.cli._printer import EventPrinter
from tether.exceptions import ModelError
from tether.models import Model, ModelChunk, ModelRequest, ScriptedModel, TextChunk
from tether.types import ToolCall, UserMessage

runner = CliRunner()
WHY = "Keep the user's note for later"


def append_call(path: str, text: str) -> str:
    call = {"name": "fs.append", "arguments": {"path": path, "text": text, "why": WHY}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"


def scripted(monkeypatch: pytest.MonkeyPatch, *turns: str) -> ScriptedModel:
    model = ScriptedModel(list(turns))

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return model

    monkeypatch.setattr("tether.cli._run.model_from_name", fake_model)
    return model


def run(*args: str) -> list[str]:
    return ["run", "Note that milk is out", "--dialect", "hermes", *args]


def test_a_run_that_reaches_its_turn_limit_exits_1_and_names_the_option(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    scripted(monkeypatch, append_call("notes.txt", "milk\n"), append_call("notes.txt", "milk\n"))
    result = runner.invoke(app, [*run("--pack", "fs", "--root", str(tmp_path), "--max-turns", "1")])
    assert result.exit_code == 1
    assert result.output.endswith(
        "error: the run stopped at its limit of 1 model turn (max_iterations) before the model finished; "
        "raise it with --max-turns, e.g. --max-turns 2.\n"
    )
    assert "done" not in result.output


def test_the_final_answer_is_printed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    scripted(monkeypatch, "Milk is out: noted.")
    result = runner.invoke(app, run())
    assert result.exit_code == 0, result.output
    assert result.output == "Milk is out: noted.\ndone (no_calls)\n"


@pytest.mark.parametrize("prompt", ["", "   "])
def test_an_empty_prompt_is_an_error(prompt: str) -> None:
    result = runner.invoke(app, ["run", prompt])
    assert result.exit_code == 2
    assert result.output.startswith("error: The prompt is empty")


def test_schema_export_to_an_empty_name_is_an_error_not_the_current_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["schema", "export", ""])
    assert result.exit_code == 2
    assert result.output.startswith("error: Give the folder to write the schemas to")
    assert list(tmp_path.iterdir()) == []


def test_corpus_with_a_file_that_is_not_there_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "hermes.jsonl").write_text('{"text": "hi", "expected_calls": []}\n', encoding="utf-8")
    result = runner.invoke(app, ["corpus", str(tmp_path), "--file", "nosuch", "--file", "hermes"])
    assert result.exit_code == 2
    assert result.output.startswith(
        f"error: No corpus file named nosuch in {tmp_path} (--file takes a file's stem); there are: hermes."
    )


def test_a_run_keeps_its_calls_in_the_journal_that_audit_reads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    scripted(monkeypatch, append_call("notes.txt", "milk\n"), "Noted.")
    result = runner.invoke(app, run("--pack", "fs", "--root", str(tmp_path), "--journal", url))
    assert result.exit_code == 0, result.output
    tail = runner.invoke(app, ["audit", "tail", "--json"], env={"TETHER_JOURNAL_URL": url})
    entries = json.loads(tail.output)
    assert [(e["kind"], e["tool"], e["why"]) for e in entries] == [
        ("intent", "fs.append", WHY),
        ("result", "fs.append", WHY),
    ]
    assert entries[1]["envelope"] == {"ok": True, "data": {"path": "notes.txt", "bytes_written": 5}}


def test_the_journal_url_can_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'env.db'}"
    scripted(monkeypatch, append_call("notes.txt", "milk\n"), "Noted.")
    result = runner.invoke(app, run("--pack", "fs", "--root", str(tmp_path)), env={"TETHER_JOURNAL_URL": url})
    assert result.exit_code == 0, result.output
    stats = json.loads(runner.invoke(app, ["audit", "stats", "--db", url, "--json"]).output)
    assert (stats["calls"], stats["ok"]) == (1, 1)


def test_read_only_offers_only_tools_without_side_effects(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    model = scripted(monkeypatch, append_call("notes.txt", "milk\n"), "I cannot write here.")
    result = runner.invoke(app, run("--pack", "fs", "--root", str(tmp_path), "--read-only"))
    assert result.exit_code == 0, result.output
    assert "✗ UNKNOWN_TOOL" in result.output
    assert not (tmp_path / "notes.txt").exists()
    taught = model.requests[0].system  # a text dialect teaches the tools in the system prompt
    assert "fs.read" in taught
    assert "fs.append" not in taught


def test_confirm_with_no_terminal_refuses_calls_with_side_effects_and_tells_the_model_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    model = scripted(monkeypatch, append_call("notes.txt", "milk\n"), "I need your approval to write it.")
    result = runner.invoke(app, run("--pack", "fs", "--root", str(tmp_path), "--confirm"))  # stdin: no TTY
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "notes.txt").exists()
    feedback = model.requests[1].messages[-1]
    assert isinstance(feedback, UserMessage)  # a text dialect's results go back as the user's turn
    feedback = feedback.content
    assert "PERMISSION_DENIED" in feedback
    assert "fs.append changes things, so it needs the user's approval" in feedback
    assert "they can run it in a terminal to approve it, or without --confirm" in feedback


def test_confirm_asks_at_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    scripted(monkeypatch, append_call("notes.txt", "milk\n"), "Noted.")
    monkeypatch.setattr("tether.cli._run._at_terminal", lambda: True)
    result = runner.invoke(app, run("--pack", "fs", "--root", str(tmp_path), "--confirm"), input="y\n")
    assert result.exit_code == 0, result.output
    assert 'allow fs.append({"path": "notes.txt", "text": "milk\\n"})? [y/N] ' in result.output
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "milk\n"


def test_a_failure_after_streamed_text_starts_its_own_line(monkeypatch: pytest.MonkeyPatch) -> None:
    class Failing(Model):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            yield TextChunk("Let me check")
            raise ModelError("openai:x at http://127.0.0.1:9/v1/: APIConnectionError: Connection error.")

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return Failing()

    monkeypatch.setattr("tether.cli._run.model_from_name", fake_model)
    result = runner.invoke(app, ["run", "hi"])
    assert result.exit_code == 1
    assert (
        result.output
        == "Let me check\nerror: openai:x at http://127.0.0.1:9/v1/: APIConnectionError: Connection error.\n"
    )


def test_the_journal_the_session_log_and_confirm_work_together(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url, log = f"sqlite:///{tmp_path / 'runs.db'}", tmp_path / "session-log.md"
    scripted(monkeypatch, append_call("notes.txt", "milk\n"), "Noted.")
    monkeypatch.setattr("tether.cli._run._at_terminal", lambda: True)
    options = ["--journal", url, "--session-log", str(log), "--confirm"]
    result = runner.invoke(app, run("--pack", "fs", "--root", str(tmp_path), *options), input="yes\n")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "milk\n"
    assert "tool: fs.append" in log.read_text(encoding="utf-8")
    stats = json.loads(runner.invoke(app, ["audit", "stats", "--db", url, "--json"]).output)
    assert (stats["calls"], stats["ok"]) == (1, 1)


def test_ctrl_c_or_ctrl_d_at_the_question_is_a_no(monkeypatch: pytest.MonkeyPatch) -> None:
    printer = EventPrinter(Console(file=io.StringIO()), show_stream=True)
    call = ToolCall(id="c1", name="fs.append", arguments={"path": "a.txt", "text": "x"})
    for pressed in (KeyboardInterrupt, EOFError):

        def answer(prompt: object, pressed: type[BaseException] = pressed) -> str:
            raise pressed

        monkeypatch.setattr(printer.console, "input", answer)
        assert printer.approve(call) is False


def test_reasoning_open_reads_the_output_as_beginning_inside_reasoning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    thought = append_call("notes.txt", "eggs\n")  # only considered: it must not run
    call = append_call("notes.txt", "milk\n")
    scripted(monkeypatch, f"Eggs? {thought} No, milk.</think>\n{call}", "Noted.</think>Milk is out: noted.")
    result = runner.invoke(app, run("--pack", "fs", "--root", str(tmp_path), "--reasoning-open"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "notes.txt").read_text() == "milk\n"
    assert result.output.endswith("Milk is out: noted.\ndone (no_calls)\n")


def test_reasoning_open_without_a_text_dialect_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    scripted(monkeypatch, "Hi")
    result = runner.invoke(app, ["run", "hi", "--reasoning-open"])
    assert result.exit_code != 0
    assert "--dialect hermes" in result.output
