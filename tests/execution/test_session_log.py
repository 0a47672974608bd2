"""MOOLLM's session-log.md: a YAML block per call (annotations as comments above `why`) and per result."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tether.execution import Executor, Run, SessionLog
from tether.tools import Toolset, tool
from tether.types import ToolCall

pytestmark = pytest.mark.anyio


@tool(name="fs.read", side_effects="none", requires_why=True)
def fs_read(path: str) -> dict[str, object]:
    return {"content": "parseExpression()", "lines": 1}


async def test_each_call_is_logged_as_yaml_blocks_with_the_why_and_comments(tmp_path: Path) -> None:
    log = tmp_path / "session-log.md"
    executor = Executor(Toolset(fs_read), recorders=[SessionLog(log)])
    call = ToolCall(
        id="c1",
        name="fs.read",
        arguments={"path": "src/parser.ts"},
        why="Check if recursive descent handles nested expressions",
        annotations=("Part of the expression parser audit", "# Previous read showed parseAtom"),
    )
    await executor.execute(call, Run())
    text = log.read_text()
    assert text.startswith("# Session log\n\n## ")
    blocks = text.split("```yaml\n")[1:]
    call_block, result_block = (b.split("```")[0] for b in blocks)
    assert call_block == (
        "type: tool_call\n"
        "tool: fs.read\n"
        "id: c1\n"
        "args:\n"
        "  path: src/parser.ts\n"
        "  # Part of the expression parser audit\n"
        "  # Previous read showed parseAtom\n"
        "  why: Check if recursive descent handles nested expressions\n"
    )
    result = yaml.safe_load(result_block)
    assert result.pop("duration_ms") >= 0
    assert result == {
        "type": "tool_result",
        "id": "c1",
        "status": "ran",
        "ok": True,
        "data": {"content": "parseExpression()", "lines": 1},
    }


async def test_refusals_are_logged_with_their_error(tmp_path: Path) -> None:
    log = tmp_path / "session-log.md"
    executor = Executor(Toolset(fs_read), recorders=[SessionLog(log)])
    await executor.execute(ToolCall(id="c1", name="fs.read", arguments={"path": "a"}), Run())
    result = yaml.safe_load(log.read_text().split("```yaml\n")[2].split("```")[0])
    assert (result["status"], result["ok"], result["error"]["code"]) == ("refused", False, "MISSING_WHY")
