"""A published MCP server package (mcp-server-time, a dev dependency) run as users run it: its command."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from tether.cli import app
from tether.execution import Executor
from tether.mcp import MCPToolset
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

COMMAND = f"{Path(sys.executable).parent / 'mcp-server-time'} --local-timezone UTC"


@pytest.fixture(scope="module")
def time_server() -> Iterator[MCPToolset]:
    with MCPToolset.stdio(COMMAND) as toolset:
        yield toolset


def test_its_tools_are_read_only_and_callable_through_the_executor(time_server: MCPToolset) -> None:
    assert {n: t.spec.side_effects for n, t in time_server.tools().items()} == {
        "get_current_time": "none", "convert_time": "none"
    }  # fmt: skip
    call = ToolCall(id="c1", name="get_current_time", arguments={"timezone": "Europe/Paris"})
    envelope = anyio.run(lambda: Executor(time_server).execute(call))
    assert isinstance(envelope, OkEnvelope)
    assert envelope.data["timezone"] == "Europe/Paris"


def test_its_own_refusal_reaches_the_model_as_an_envelope(time_server: MCPToolset) -> None:
    call = ToolCall(id="c2", name="get_current_time", arguments={"timezone": "Mars/Olympus"})
    envelope = anyio.run(lambda: Executor(time_server).execute(call))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "TOOL_ERROR"
    assert "Mars/Olympus" in envelope.error.message


def test_tools_list_shows_its_tools_as_tether_sees_them() -> None:
    result = CliRunner().invoke(app, ["tools", "list", "--mcp", COMMAND])
    assert result.exit_code == 0, result.output
    assert "get_current_time" in result.output
    assert "convert_time" in result.output


def test_tools_list_of_a_command_that_is_not_there_says_so() -> None:
    result = CliRunner().invoke(app, ["tools", "list", "--mcp", "no-such-mcp-server"])
    assert result.exit_code == 2
    assert "no-such-mcp-server did not start" in result.output
