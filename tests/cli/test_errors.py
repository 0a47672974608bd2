"""No traceback reaches a user: bad input is one clear line (exit 2), a bug is one line and a hint (exit 1).

Each case here once printed a traceback, crashed inside Rich's markup parser, or swallowed `[...]`.
"""

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tether
from tether.cli import app
from tether.exceptions import UserError
from tether.models import Model, ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def tether_cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """The real command, in its own process, as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "tether", *args], input=stdin, capture_output=True, timeout=60, check=False
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    )


def assert_one_clear_line(output: str, *expected: str) -> None:
    assert "Traceback" not in output
    assert output.startswith("error: "), output
    for text in expected:
        assert text in output


def scripted(monkeypatch: pytest.MonkeyPatch, *turns: str) -> None:
    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return ScriptedModel(list(turns))

    monkeypatch.setattr("tether.cli._run.model_from_name", fake_model)


def test_a_path_that_looks_like_markup_is_shown_as_written(tmp_path: Path) -> None:
    for name in ("[/x].yaml", "[bold]tools.yaml"):
        result = runner.invoke(app, ["tools", "list", str(tmp_path / name)])
        assert result.exit_code == 2
        assert_one_clear_line(result.output, f"No such tool definition file: {tmp_path / name}")


def test_an_error_naming_an_extra_keeps_its_brackets(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing_sdk(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        raise UserError("AnthropicModel needs the anthropic SDK: pip install 'tether[anthropic]'.")

    monkeypatch.setattr("tether.cli._run.model_from_name", missing_sdk)
    result = runner.invoke(app, ["run", "hi"])
    assert result.exit_code == 2
    assert_one_clear_line(result.output, "pip install 'tether[anthropic]'.")


def test_a_prompt_and_model_output_that_look_like_markup_are_printed_as_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answer = "Use [/x] and [bold]this[/bold] :x: as written."
    call = '<tool_call>\n{"name": "[/red]", "arguments": {"why": "[/] closes"}}\n</tool_call>'
    scripted(monkeypatch, call, answer)
    result = runner.invoke(app, ["run", "What do [/x] and [bold] mean?", "--dialect", "hermes"])
    assert result.exit_code == 0, result.output
    assert "→ [/red]({})  why: [/] closes" in result.output
    assert "UNKNOWN_TOOL" in result.output
    assert f"{answer}\ndone (no_calls)\n" in result.output


def test_parse_refuses_stdin_that_is_not_utf8() -> None:
    result = tether_cli("parse", stdin=b"caf\xe9 <tool_call>")
    assert result.returncode == 2
    assert_one_clear_line(result.stderr, "stdin is not UTF-8 text (byte 0xe9 at offset 3)")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(:\n", "failed: invalid syntax at line 1: def f(:"),
        (
            "import tether_no_such_module\n",
            "failed: ModuleNotFoundError: No module named 'tether_no_such_module'",
        ),
        ("raise RuntimeError('config missing')\n", "failed: RuntimeError: config missing"),
    ],
)
def test_a_python_tool_file_that_fails_to_import_is_one_clear_line(
    tmp_path: Path, source: str, expected: str
) -> None:
    path = tmp_path / "tools.py"
    path.write_text(source, encoding="utf-8")
    result = runner.invoke(app, ["tools", "list", str(path)])
    assert result.exit_code == 2
    assert_one_clear_line(result.output, f"Importing {path} {expected}")


@pytest.mark.parametrize("source", ["", "  ", "..relative"])
def test_a_tool_source_that_names_nothing_is_one_clear_line(source: str) -> None:
    result = runner.invoke(app, ["tools", "list", source])
    assert result.exit_code == 2
    assert_one_clear_line(result.output, "module path")


def test_replaying_a_cassette_without_a_prompt_says_what_replay_needs(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text('{"cassette": 1}\n{"turn": 0, "chunks": ["hi"]}\n', encoding="utf-8")
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2
    assert_one_clear_line(result.output, "has no prompt to replay", "tether chat --replay")


@pytest.mark.parametrize("turn", ['{"turn": 0}', "[1, 2]", '{"chunks": "abc"}', '{"chunks": [1]}'])
def test_replaying_a_malformed_turn_names_its_line(tmp_path: Path, turn: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(f'{{"cassette": 1, "prompt": "hi"}}\n{turn}\n', encoding="utf-8")
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2
    assert_one_clear_line(result.output, f"{path}:2 is not a recorded model turn")


def test_replaying_a_header_with_the_wrong_types_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"cassette": 1, "prompt": "hi", "packs": [1]}\n', encoding="utf-8")
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2
    assert_one_clear_line(result.output, "the header's 'packs' should be a list of strings, not [1]")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("not json", "hermes.jsonl:1 is not a corpus case: not JSON"),
        ('{"a": 1}', "a JSON object with a `text`"),
    ],
)
def test_a_jsonl_file_that_is_not_a_corpus_is_one_clear_line(
    tmp_path: Path, line: str, expected: str
) -> None:
    (tmp_path / "hermes.jsonl").write_text(line + "\n", encoding="utf-8")
    for target in (tmp_path, tmp_path / "hermes.jsonl"):  # a folder of corpus files, or one of them
        result = runner.invoke(app, ["corpus", str(target)])
        assert result.exit_code == 2
        assert_one_clear_line(result.output, expected)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("foo://bar", "Cannot open the journal at foo://bar: Can't load plugin: sqlalchemy.dialects:foo."),
        ("nonsense", "Cannot open the journal at 'nonsense': Could not parse SQLAlchemy URL"),
        (
            "postgresql+psycopg://me:hunter2@127.0.0.1:9/db",
            "Cannot open the journal at postgresql+psycopg://me:***@",
        ),
    ],
)
def test_a_journal_url_that_cannot_be_opened_is_one_clear_line(url: str, expected: str) -> None:
    result = runner.invoke(app, ["audit", "tail", "--db", url])
    assert result.exit_code == 2
    assert_one_clear_line(result.output, expected, "sqlite:///path/to/journal.db")
    assert "hunter2" not in result.output


def test_an_unexpected_exception_is_one_line_and_a_hint_to_report_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(source: str) -> None:
        raise KeyError("spec")

    monkeypatch.setattr("tether.cli._tools.load_tools", broken)
    result = runner.invoke(app, ["tools", "list", "x.yaml"])
    assert result.exit_code == 1
    assert result.output == (
        "error: tether failed unexpectedly: KeyError: 'spec'\n"
        "  This is a bug in tether: please report it with the traceback (run again with `tether --debug ...` "
        "or TETHER_DEBUG=1 to see it).\n"
    )
    for debug in (
        runner.invoke(app, ["--debug", "tools", "list", "x.yaml"]),
        runner.invoke(app, ["tools", "list", "x.yaml"], env={"TETHER_DEBUG": "1"}),
    ):
        assert isinstance(debug.exception, KeyError)  # re-raised: Python prints its traceback


def test_version_and_python_dash_m() -> None:
    result = tether_cli("--version")
    assert (result.returncode, result.stdout) == (0, f"tether {tether.__version__}\n")
    listing = tether_cli()
    assert "Usage: python -m tether" in listing.stdout + listing.stderr
    assert runner.invoke(app, ["--version"]).output == f"tether {tether.__version__}\n"


def test_the_version_is_the_package_version() -> None:
    from importlib.metadata import version

    assert tether.__version__ == version("tether")


def test_every_console_of_the_cli_prints_text_literally() -> None:
    # Rich reads `[...]` in a string as markup unless the console says otherwise: one factory makes them all
    for module in sorted((ROOT / "src" / "tether" / "cli").glob("*.py")):
        source = module.read_text(encoding="utf-8")
        made_here = source.count("Console(")
        assert made_here == (1 if module.name == "_errors.py" else 0), module.name
        for markup in ("from_markup", "[bold", "escape("):
            assert markup not in source, module.name


def test_a_reader_that_stops_early_is_not_reported_as_a_bug() -> None:
    listing = subprocess.run(
        f"{sys.executable} -m tether tools export {ROOT / 'examples' / 'weather' / 'weather.py'} -f yaml "
        f"| {sys.executable} -c 'import sys; sys.stdin.close()'",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "failed unexpectedly" not in listing.stderr


def test_a_sandbox_that_cannot_start_is_one_line_naming_the_fix_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the host lacks what the user asked for, and the message names the fix: the user's to act on, not a bug
    def no_bubblewrap(source: str) -> None:
        raise tether.SandboxUnavailable("bubblewrap is not installed: apt-get install bubblewrap")

    monkeypatch.setattr("tether.cli._tools.load_tools", no_bubblewrap)
    result = runner.invoke(app, ["tools", "list", "x.yaml"])
    assert result.exit_code == 2
    assert result.output == "error: bubblewrap is not installed: apt-get install bubblewrap\n"
