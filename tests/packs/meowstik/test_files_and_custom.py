"""file_put (workspace) and custom."""

from pathlib import Path
from typing import Any

import pytest

from tether.exceptions import UserError
from tether.execution import Executor
from tether.packs.meowstik import meowstik_tools
from tether.tools import ToolContext, tool
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio


async def run(tools: Any, name: str, /, **arguments: Any) -> Any:
    return await Executor(tools).execute(ToolCall(id="f1", name=name, arguments=arguments))


async def test_file_put_writes_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    envelope = await run(
        meowstik_tools(roots=[tmp_path]), "file_put", path="notes/today.md", content="# Today"
    )
    assert envelope == OkEnvelope(data={"path": "notes/today.md", "bytes": 7})
    assert (tmp_path / "notes" / "today.md").read_text() == "# Today"


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd", "notes/../../escape.txt"])
async def test_file_put_refuses_paths_outside_the_workspace(tmp_path: Path, path: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    envelope = await run(meowstik_tools(roots=[root]), "file_put", path=path, content="x")
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "PERMISSION_DENIED"
    assert not (tmp_path / "escape.txt").exists()


@tool(side_effects="none")
def weather(city: str, days: int = 1) -> dict[str, Any]:
    """The forecast."""
    return {"city": city, "days": days}


async def test_custom_runs_the_users_tool_by_name_with_its_own_validation() -> None:
    tools = meowstik_tools(custom={"weather": weather})
    assert await run(tools, "custom", name="weather", parameters={"city": "Lisbon"}) == OkEnvelope(
        data={"city": "Lisbon", "days": 1}
    )
    bad = await run(tools, "custom", name="weather", parameters={"city": "Lisbon", "days": "many"})
    assert isinstance(bad, ErrorEnvelope)
    assert bad.error.code == "INVALID_ARGS"
    unknown = await run(tools, "custom", name="stocks")
    assert isinstance(unknown, ErrorEnvelope)
    assert (unknown.error.code, unknown.error.suggestion) == ("UNKNOWN_TOOL", "Use one of: weather.")


def test_custom_refuses_tools_whose_guards_it_could_not_apply() -> None:
    @tool(scopes=["admin"])
    def wipe(context: ToolContext) -> None:
        """Wipe."""

    with pytest.raises(UserError, match="give it to the agent as a tool of its own"):
        meowstik_tools(custom={"wipe": wipe})
