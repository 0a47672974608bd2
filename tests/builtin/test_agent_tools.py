"""`agent_tools`: the one builder of an agent's tools that `tether run`, `tether chat` and `tether serve` use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether.builtin import PackConfig, agent_tools
from tether.exceptions import UserError
from tether.execution import Executor
from tether.tools import Toolset, tool
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

SHOUT = '''
from tether import tool

@tool(side_effects="none")
def shout(text: str) -> str:
    """Shout."""
    return text.upper()
'''


@tool(side_effects="mutating")
def note(text: str) -> str:
    """Write a note."""
    return text


def test_files_packs_and_extra_toolsets_combine_with_paths_relative_to_base(tmp_path: Path) -> None:
    (tmp_path / "shout.py").write_text(SHOUT, encoding="utf-8")
    (tmp_path / "work").mkdir()
    tools = agent_tools(["shout.py"], ["fs"], ["work"], tmp_path, extra=[Toolset(note)])
    assert {"shout", "fs.read", "fs.write", "note"} <= set(tools.tools())


def test_read_only_keeps_only_tools_without_side_effects_extra_toolsets_included(tmp_path: Path) -> None:
    tools = agent_tools(packs=["fs"], base=tmp_path, read_only=True, extra=[Toolset(note)])
    assert sorted(tools.tools()) == ["fs.ls", "fs.read"]


@pytest.mark.anyio
async def test_the_packs_are_confined_to_the_roots_given_not_the_settings_own(tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    (tmp_path / "inside" / "a.txt").write_text("in", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("out", encoding="utf-8")
    settings = PackConfig(roots=(tmp_path,))
    executor = Executor(agent_tools(packs=["fs"], roots=["inside"], base=tmp_path, settings=settings))

    async def read(path: str) -> Any:
        call = ToolCall(
            id="c", name="fs.read", arguments={"path": path}, why="Check the confinement of the pack"
        )
        return await executor.execute(call)

    assert isinstance(await read("a.txt"), OkEnvelope)
    assert isinstance(await read("../outside.txt"), ErrorEnvelope)
    assert isinstance(await read(str(tmp_path / "outside.txt")), ErrorEnvelope)


def test_an_unknown_pack_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="fs"):
        agent_tools(packs=["fss"], base=tmp_path)
