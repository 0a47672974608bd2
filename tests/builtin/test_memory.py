import json
from pathlib import Path
from typing import Any

import pytest

from tether.builtin.memory import memory_pack
from tether.execution import Executor
from tether.types import OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

WHY = "Create summary of tool outputs to reduce context size"


async def call(root: Path, name: str, **arguments: Any) -> Any:
    return await Executor(memory_pack([root])).execute(
        ToolCall(id="c1", name=name, arguments=arguments, why=WHY)
    )


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    (tmp_path / "a.md").write_text(
        "# Parser\n\nIt parses atoms. Then more.\n\n## Errors\n\nErrors are data. Always.\n"
    )
    (tmp_path / "b.py").write_text("import os\n\nclass Parser:\n    pass\n\ndef parse(x):\n    return x\n")
    return tmp_path


async def test_summarize_writes_a_summary_with_references(notes: Path) -> None:
    envelope = await call(
        notes, "memory.summarize", target_paths=["a.md", "b.py"], into_path="memory/summary.md"
    )
    assert isinstance(envelope, OkEnvelope)
    assert envelope.data["sources"] == [
        {"path": "a.md", "lines": 7, "sha256": envelope.data["sources"][0]["sha256"], "truncated": False},
        {"path": "b.py", "lines": 7, "sha256": envelope.data["sources"][1]["sha256"], "truncated": False},
    ]
    text = (notes / "memory" / "summary.md").read_text()
    assert text.startswith("# Summary\n\n## a.md\n\n- **Parser**\n")
    assert text.endswith(
        f"## Sources\n\n- a.md (7 lines, sha256 {envelope.data['sources'][0]['sha256']})\n- b.py (7 lines, sha256 {envelope.data['sources'][1]['sha256']})\n"
    )


async def test_summarize_styles(notes: Path) -> None:
    for style, expected in (
        ("bullet", "- **Parser**\n- It parses atoms.\n- **Errors**\n- Errors are data."),
        ("narrative", "# Parser"),
        ("schema", "- # Parser\n- ## Errors"),
    ):
        await call(
            notes, "memory.summarize", target_paths=["a.md"], into_path="s.md", style=style, keep_refs=False
        )
        assert (notes / "s.md").read_text() == f"# Summary\n\n## a.md\n\n{expected}\n"
    await call(notes, "memory.summarize", target_paths=["b.py"], into_path="s.md", style="schema")
    assert "- class Parser:\n- def parse(x):" in (notes / "s.md").read_text()
    assert "## Sources\n\n- b.py (7 lines, sha256 " in (notes / "s.md").read_text()


async def test_summarize_is_confined_to_the_roots(notes: Path) -> None:
    outside = await call(notes, "memory.summarize", target_paths=["/etc/passwd"], into_path="s.md")
    into = await call(notes, "memory.summarize", target_paths=["a.md"], into_path="../s.md")
    assert (outside.error.code, into.error.code) == ("PERMISSION_DENIED", "PERMISSION_DENIED")


async def test_advise_hints_persist_per_session(notes: Path) -> None:
    hot = [{"path": "a.md", "why": "being edited"}]
    first = await call(notes, "memory.advise", hot=hot, cold=[{"path": "b.py", "why": "done with it"}])
    assert first.data == {"hot": hot, "cold": [{"path": "b.py", "why": "done with it"}]}
    second = await call(notes, "memory.advise", cold=[{"path": "a.md", "why": "finished"}])
    assert second.data == {
        "hot": [],
        "cold": [{"path": "a.md", "why": "finished"}, {"path": "b.py", "why": "done with it"}],
    }
    files = list((notes / ".tether" / "memory").glob("*.json"))
    assert len(files) == 1
    assert json.loads(files[0].read_text())["a.md"] == {"temperature": "cold", "why": "finished"}


async def test_advise_refuses_paths_outside_the_roots(notes: Path) -> None:
    envelope = await call(notes, "memory.advise", hot=[{"path": "../../etc/passwd", "why": "x"}])
    assert envelope.error.code == "PERMISSION_DENIED"


async def test_a_symlink_planted_at_the_hints_directory_is_refused(
    notes: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (notes / ".tether").mkdir()
    (notes / ".tether" / "memory").symlink_to(elsewhere)
    envelope = await call(notes, "memory.advise", hot=[{"path": "a.md", "why": "x"}])
    assert envelope.error.code == "PERMISSION_DENIED"
    assert list(elsewhere.iterdir()) == []


async def test_hints_can_live_in_a_configured_state_dir(
    notes: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    state = tmp_path_factory.mktemp("state")
    tools = memory_pack([notes], state_dir=state / "hints")
    call_ = ToolCall(
        id="c1", name="memory.advise", arguments={"hot": [{"path": "a.md", "why": "x"}]}, why=WHY
    )
    assert isinstance(await Executor(tools).execute(call_), OkEnvelope)
    assert len(list((state / "hints").glob("*.json"))) == 1
