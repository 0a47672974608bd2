"""A server that speaks an older MCP revision (no `subscriptions/listen`): its tools/list_changed
notifications still refresh the toolset, on both of the client's paths."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest

from tether.execution import Executor
from tether.mcp import MCPToolset
from tether.types import OkEnvelope, ToolCall

OLD_SERVER = Path(__file__).with_name("old_server.py")
REVISIONS = ["2024-11-05", "2025-06-18", "2025-11-25"]


def grow(executor: Executor) -> None:
    assert anyio.run(executor.execute, ToolCall(id="c1", name="grow")) == OkEnvelope(data="grown")


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_thread_path_refreshes_on_the_old_notification(revision: str) -> None:
    with MCPToolset.stdio([sys.executable, str(OLD_SERVER), revision]) as toolset:
        assert sorted(toolset.tools()) == ["add", "grow"]
        grow(Executor(toolset))
        deadline = time.monotonic() + 10
        while "fresh" not in toolset.tools() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "fresh" in toolset.tools()
        assert anyio.run(Executor(toolset).execute, ToolCall(id="c2", name="fresh")) == OkEnvelope(data="new")
        assert "got subscriptions/listen" not in toolset.stderr_tail()  # not asked of a revision without it


@pytest.mark.anyio
@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_async_with_path_refreshes_on_the_old_notification(revision: str) -> None:
    async with MCPToolset.stdio([sys.executable, str(OLD_SERVER), revision]) as toolset:
        executor = Executor(toolset)
        assert await executor.execute(
            ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2})
        ) == OkEnvelope(data="3")
        assert await executor.execute(ToolCall(id="c2", name="grow")) == OkEnvelope(data="grown")
        for _ in range(200):
            if "fresh" in toolset.tools():
                break
            await anyio.sleep(0.05)
        assert await executor.execute(ToolCall(id="c3", name="fresh")) == OkEnvelope(data="new")
