"""The `tether` command line: tools list/show/export, schema export, demo."""

import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from tether.cli import app
from tether.cli._printer import EventPrinter
from tether.exceptions import ModelError
from tether.models import FunctionModel, Model, ModelChunk, ModelRequest, ScriptedModel, TextChunk
from tether.types import OkEnvelope, ToolCall, ToolEndEvent, ToolStartEvent

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "weather"
runner = CliRunner()


def test_tools_list_shows_each_tool() -> None:
    result = runner.invoke(app, ["tools", "list", str(WEATHER / "weather.ts")])
    assert result.exit_code == 0, result.output
    assert "get_weather" in result.output
    assert "Forecast the weather for a city." in result.output


def test_tools_show_prints_the_spec_as_json() -> None:
    result = runner.invoke(app, ["tools", "show", str(WEATHER / "weather.yaml"), "get_weather"])
    assert result.exit_code == 0, result.output
    spec = json.loads(result.output)
    assert spec["sandbox"] == {"network": True, "filesystem": [], "timeout_ms": 5000, "isolation": "none"}


def test_tools_show_suggests_close_names() -> None:
    result = runner.invoke(app, ["tools", "show", str(WEATHER / "weather.yaml"), "get_wether"])
    assert result.exit_code == 2
    assert "did you mean: get_weather" in result.output


def test_tools_export_to_every_format() -> None:
    source = str(WEATHER / "weather.py")
    openai = json.loads(runner.invoke(app, ["tools", "export", source, "-f", "openai", "--strict"]).output)
    assert openai[0]["function"]["strict"] is True
    anthropic = json.loads(runner.invoke(app, ["tools", "export", source, "-f", "anthropic"]).output)
    assert anthropic[0]["input_schema"]["required"] == ["city"]
    gemini = json.loads(runner.invoke(app, ["tools", "export", source, "-f", "gemini"]).output)
    assert gemini[0]["parameters"]["type"] == "OBJECT"
    schema = json.loads(runner.invoke(app, ["tools", "export", source, "-f", "json-schema"]).output)
    assert list(schema) == ["get_weather"]
    yaml_text = runner.invoke(app, ["tools", "export", source, "-f", "yaml"]).output
    assert yaml_text.startswith("tool:\n  name: get_weather\n")


def test_a_bad_source_is_one_clear_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("tool: {name: 'x y'}", encoding="utf-8")
    result = runner.invoke(app, ["tools", "list", str(tmp_path / "bad.yaml")])
    assert result.exit_code == 2
    assert "error:" in result.output
    assert "Traceback" not in result.output


def test_schema_export_writes_versioned_files(tmp_path: Path) -> None:
    result = runner.invoke(app, ["schema", "export", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert {p.name for p in tmp_path.iterdir()} >= {"tool_call.v1.json", "envelope.v1.json"}


def test_demo_replays_a_session_and_refuses_the_same_bad_call_from_four_sources() -> None:
    result = runner.invoke(app, ["demo", str(ROOT / "examples")])
    assert result.exit_code == 0, result.output
    assert "done (end_turn)" in result.output
    assert result.output.count("missing required argument") == 4


def test_replay_runs_a_recorded_session_through_the_real_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = runner.invoke(app, ["replay", "examples/sessions/find-weather.jsonl"])
    assert result.exit_code == 0, result.output
    assert "MISSING_WHY" in result.output  # the model's first fs.read lacked `why` and was refused
    assert "done (end_turn)" in result.output


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng to make speech files")
def test_the_terminal_deletes_the_speech_files_it_does_not_play(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where `say` writes its WAV files
    result = runner.invoke(app, ["replay", "examples/sessions/find-weather.jsonl"])
    assert result.exit_code == 0, result.output
    assert "say: " in result.output  # the cassette's `say` call was spoken into a speech file
    assert list(tmp_path.glob("tether-say-*.wav")) == []


def test_run_without_a_model_says_how_to_configure_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TETHER_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    result = runner.invoke(app, ["run", "hello"])
    assert result.exit_code == 2
    assert "No model is configured" in result.output


def test_a_result_that_does_not_follow_its_call_names_its_tool() -> None:
    console = Console(record=True, width=200)
    printer = EventPrinter(console, show_stream=False)
    for name in ("slow", "fast"):
        call = ToolCall(id=name, name=name, arguments={})
        printer(ToolStartEvent(run_id="r", data="", call=call))
    printer(ToolEndEvent(run_id="r", call_id="fast", envelope=OkEnvelope(data=1)))
    printer(ToolEndEvent(run_id="r", call_id="slow", envelope=OkEnvelope(data=2)))
    assert console.export_text().splitlines()[2:] == ["  ✓ 1", "  ✓ slow: 2"]


def test_parse_reads_tools_from_any_definition_file_for_positional_arguments() -> None:
    output = '```tool\nreturn get_weather("Oslo", 3);\n```'
    for source in ("weather.ts", "weather.py", "weather.yaml", "weather.openai.json"):
        result = runner.invoke(
            app, ["parse", "--dialect", "fenced", "--tools", str(WEATHER / source)], input=output
        )
        assert result.exit_code == 0, result.output
        calls = json.loads(result.output)["calls"]
        assert [(c["name"], c["arguments"]) for c in calls] == [("get_weather", {"city": "Oslo", "days": 3})]


def test_parse_with_a_missing_tools_file_is_one_clear_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["parse", "--tools", str(tmp_path / "nope.json")], input="hi")
    assert result.exit_code == 2
    assert "No such tool definition file" in result.output
    assert "Traceback" not in result.output


def test_run_reports_a_provider_failure_in_one_line_and_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable(request: ModelRequest) -> str:
        raise ModelError("openai:x at http://127.0.0.1:9/v1/: APIConnectionError: Connection error.")

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return FunctionModel(unreachable)

    monkeypatch.setattr("tether.cli._run.model_from_name", fake_model)
    result = runner.invoke(app, ["run", "hi"])
    assert result.exit_code == 1
    assert "error: openai:x at http://127.0.0.1:9/v1/: APIConnectionError" in result.output
    assert "Traceback" not in result.output


def test_schema_export_to_an_unwritable_place_is_one_clear_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    result = runner.invoke(app, ["schema", "export", str(blocker / "schemas")])
    assert result.exit_code == 2
    assert "Cannot write the schemas to" in result.output


def test_run_limits_a_runaway_model_from_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    class Runaway(Model):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            while True:
                yield TextChunk("la " * 10)

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return Runaway()

    monkeypatch.setattr("tether.cli._run.model_from_name", fake_model)
    result = runner.invoke(app, ["run", "sing", "--dialect", "hermes", "--max-tokens", "50"])
    assert result.exit_code == 1
    assert (
        "error: the run stopped at its limit of 50 output tokens (max_tokens) before the model finished; "
        in result.output
    )
    assert "raise it with --max-tokens, e.g. --max-tokens 100." in result.output
    refused = runner.invoke(app, ["run", "sing", "--max-turns", "0"])
    assert refused.exit_code == 2
    assert "--max-turns" in refused.output


@pytest.mark.usefixtures("bwrap_installed")
def test_run_gives_yaml_command_tools_the_first_root_as_their_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("one two three\n", encoding="utf-8")
    call = '<tool_call>{"name": "text.file_words", "arguments": {"path": "notes.txt", "why": "Size it"}}</tool_call>'

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return ScriptedModel([call, "Three words."])

    monkeypatch.setattr("tether.cli._run.model_from_name", fake_model)
    tools = str(ROOT / "examples" / "moollm" / "tools.yaml")
    result = runner.invoke(
        app, ["run", "size?", "--dialect", "hermes", "--tools", tools, "--root", str(tmp_path / "work")]
    )
    assert result.exit_code == 0, result.output
    assert "3 notes.txt" in result.output


@pytest.mark.parametrize("command", ["run", "chat"])
def test_dialect_help_lists_the_text_dialects(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0
    words = {w.strip(",.") for w in result.output.replace("│", " ").split()}
    assert {"hermes", "json_calls", "fenced", "yaml", "pythonic", "xlam"} <= words
    assert "openai" not in words  # the providers' own formats are what leaving --dialect out means


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found: list[tuple[tuple[str, ...], Any]] = []
    for name, command in group.commands.items():
        found.append(((*path, name), command))
        if hasattr(command, "commands"):  # a group: typer's click is vendored, so no isinstance
            found += _commands(command, (*path, name))
    return found


def test_every_command_lists_with_a_one_line_summary() -> None:
    """A command's summary (its help's first paragraph) is one line: rich help keeps the source's
    line breaks, so a wrapped summary shows broken mid-sentence in `tether --help`."""
    import typer.main

    root = typer.main.get_command(app)
    commands = _commands(root)
    assert len(commands) > 20
    for path, command in commands:
        help_text = getattr(command, "help", None) or ""
        summary = help_text.strip().split("\n\n")[0]
        assert summary, f"tether {' '.join(path)} has no help"
        assert "\n" not in summary.strip(), f"tether {' '.join(path)}: summary spans lines: {summary!r}"
