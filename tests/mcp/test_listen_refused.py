"""A 2026-revision server that offers tool list changes but does not keep a `subscriptions/listen` stream
(rejects it, never acknowledges it, closes it, drops it, or honors no tool changes) still lists and calls,
on both of the client's paths, without being restarted; a warning says its changes are not watched."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from tether.execution import Executor
from tether.mcp import MCPToolset
from tether.types import OkEnvelope, ToolCall

SERVER = Path(__file__).with_name("unlistening_server.py")
Listening = Callable[..., str]  # the `listening` fixture (conftest.py): starts a server, returns its URL
WHY = {
    "reject": "it refused `subscriptions/listen` (-32601: Method not found: subscriptions/listen)",
    "silent": "it did not acknowledge `subscriptions/listen` within 0.5s",
    "close": "it did not agree to report tool list changes",  # the SDK reads it as an empty acknowledgment
    "brief": "it closed the stream at once, again and again",
    "drop": "it dropped the stream (listen stream ended: subscription backend down)",
    "unhonored": "it did not agree to report tool list changes",
}
ADD = ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3})


def warnings_about(toolset: MCPToolset, caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "tether.mcp" and r.levelno == logging.WARNING and toolset.name in r.getMessage()
    ]


@pytest.mark.parametrize("mode", list(WHY))
def test_the_thread_path_lists_and_calls_without_watching_changes(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tether.mcp")
    with MCPToolset.stdio([sys.executable, str(SERVER), mode], ping_timeout_s=0.5) as toolset:
        assert sorted(toolset.tools()) == ["add", "grow"]
        assert anyio.run(Executor(toolset).execute, ADD) == OkEnvelope(data="5")
        deadline = time.monotonic() + 10
        while not warnings_about(toolset, caplog) and time.monotonic() < deadline:
            time.sleep(0.05)
        (warning,) = warnings_about(toolset, caplog)
        assert WHY[mode] in warning
        assert "changes to its tool list are not watched" in warning
        assert anyio.run(Executor(toolset).execute, ADD) == OkEnvelope(data="5")  # still connected
        stderr = toolset.stderr_tail()
    assert stderr.count("got subscriptions/listen") == (
        3 if mode == "brief" else 1
    )  # asked again after a close
    assert stderr.count("unlistening_server starting") == 1  # never restarted over it


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["reject", "silent"])
async def test_the_async_with_path_lists_and_calls_without_watching_changes(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tether.mcp")
    async with MCPToolset.stdio([sys.executable, str(SERVER), mode], ping_timeout_s=0.5) as toolset:
        assert await Executor(toolset).execute(ADD) == OkEnvelope(data="5")
        (warning,) = warnings_about(toolset, caplog)  # said before the block began: listing waited for it
        assert WHY[mode] in warning
        assert toolset.stderr_tail().count("unlistening_server starting") == 1


@pytest.mark.parametrize("mode", ["reject", "drop"])
def test_over_streamable_http_too(mode: str, caplog: pytest.LogCaptureFixture, listening: Listening) -> None:
    caplog.set_level(logging.WARNING, logger="tether.mcp")
    url = listening([sys.executable, str(SERVER), mode, "http"])
    with MCPToolset.http(f"{url}/mcp", ping_timeout_s=0.5) as toolset:
        assert sorted(toolset.tools()) == ["add", "grow"]
        assert anyio.run(Executor(toolset).execute, ADD) == OkEnvelope(data="5")
        deadline = time.monotonic() + 10
        while not warnings_about(toolset, caplog) and time.monotonic() < deadline:
            time.sleep(0.05)
        (warning,) = warnings_about(toolset, caplog)
        assert WHY[mode] in warning
        assert anyio.run(Executor(toolset).execute, ADD) == OkEnvelope(data="5")
