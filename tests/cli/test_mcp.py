"""The CLI with MCP servers: `run` and `chat` mount them with --mcp, `mcp serve` is tested in tests/mcp."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.cli import app
from tether.mcp import MCPToolset
from tether.models import Model, ScriptedModel

runner = CliRunner()
SERVER = f"{sys.executable} {Path(__file__).parents[1] / 'mcp' / 'sdk_server.py'}"
ADD = '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 40}}\n</tool_call>'


@pytest.fixture(autouse=True)
def stop_servers() -> Iterator[None]:
    yield
    MCPToolset.close_all()  # the servers a command mounted (a real `tether run` stops them at exit)


def scripted(monkeypatch: pytest.MonkeyPatch, module: str, *turns: str) -> ScriptedModel:
    model = ScriptedModel(list(turns))

    def fake_model(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return model

    monkeypatch.setattr(f"tether.cli.{module}.model_from_name", fake_model)
    return model


def test_run_mounts_an_mcp_server_and_its_calls_go_through_the_guards(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = scripted(monkeypatch, "_run", ADD, "42.")
    result = runner.invoke(app, ["run", "What is 2 + 40?", "--dialect", "hermes", "--mcp", SERVER])
    assert result.exit_code == 0, result.output
    assert "add" in model.requests[0].system  # the server's tools are taught like any others
    answer = model.requests[1].messages[-1]
    assert json.dumps({"total": 42}).replace(" ", "") in str(answer).replace(" ", "")


def test_run_with_read_only_offers_only_the_servers_read_only_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    model = scripted(monkeypatch, "_run", "Nothing to do.")
    result = runner.invoke(app, ["run", "Hi", "--dialect", "hermes", "--mcp", SERVER, "--read-only"])
    assert result.exit_code == 0, result.output
    taught = model.requests[0].system
    assert "add" in taught
    assert "delete_all" not in taught


def test_chat_mounts_an_mcp_server_too(monkeypatch: pytest.MonkeyPatch) -> None:
    model = scripted(monkeypatch, "_chat", ADD, "42.")
    result = runner.invoke(app, ["chat", "--dialect", "hermes", "--mcp", SERVER], input="2 + 40?\n")
    assert result.exit_code == 0, result.output
    assert "total" in str(model.requests[1].messages[-1])


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, exited but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("command", ["run", "chat"])
def test_the_servers_a_command_started_are_stopped_when_it_ends(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    scripted(monkeypatch, f"_{command}", ADD, "42.")
    prompt = ["run", "2 + 40?"] if command == "run" else ["chat"]
    result = runner.invoke(
        app, [*prompt, "--dialect", "hermes", "--mcp", f"{SERVER} stdio {pids}"], input="2 + 40?\n"
    )
    assert result.exit_code == 0, result.output
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 1
    assert not alive(started[0])  # stopped by the command itself, before any close_all at exit


def test_an_mcp_url_that_is_not_one_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    scripted(monkeypatch, "_run", "Hi.")
    result = runner.invoke(app, ["run", "Hi", "--mcp-url", "localhost:8000/mcp"])
    assert result.exit_code == 2
    assert "http:// or https://" in result.output


def test_mcp_serve_over_http_needs_bearer_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TETHER_MCP_TOKENS", raising=False)
    result = runner.invoke(app, ["mcp", "serve", "--pack", "fs", "--http", "127.0.0.1:8000"])
    assert result.exit_code == 2
    assert "needs bearer tokens: set TETHER_MCP_TOKENS" in result.output


def test_a_malformed_token_entry_is_named_without_the_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_MCP_TOKENS", "s3cr3t-no-principal")
    result = runner.invoke(app, ["mcp", "serve", "--pack", "fs", "--http", "127.0.0.1:8000"])
    assert result.exit_code == 2
    assert "TOKEN=principal[:scope,scope]" in result.output
    assert "s3cr3t-no-principal" not in result.output  # a secret is not echoed to the terminal
