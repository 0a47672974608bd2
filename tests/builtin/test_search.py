import functools
import os
import shutil
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from tether.builtin import _search
from tether.builtin._search import DEADLINE_S, find_hits
from tether.builtin.search import search_pack
from tether.execution import Executor, Policy
from tether.sandbox import Sandbox
from tether.types import OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

ENGINES = [
    "python",
    pytest.param("rg", marks=pytest.mark.skipif(shutil.which("rg") is None, reason="no ripgrep")),
]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "docs" / "a.md").write_text("# Title\nYAML Jazz is semantic\nmore\nyaml jazz again\n")
    (root / "docs" / "deep" / "b.md").write_text("nothing\nJazz hands\n")
    (root / "docs" / "notes.txt").write_text("Jazz in a txt\n")
    (root / "src" / "x.py").write_text("def parse():\n    return 'jazz'\r\n")
    (root / ".hidden.md").write_text("Jazz hidden\n")
    (root / "bin.dat").write_bytes(b"Jazz\x00binary")
    (root / ".gitignore").write_text("docs/\n")
    (tmp_path / "outside.md").write_text("Jazz outside\n")
    (root / "out_link.md").symlink_to(tmp_path / "outside.md")
    return root


async def call(root: Path, engine: str, **arguments: Any) -> Any:
    executor = Executor(search_pack([root], engine=engine))
    why = "Find where YAML Jazz is defined to understand its principles"
    return await executor.execute(ToolCall(id="c1", name="search.lexical", arguments=arguments, why=why))


@pytest.mark.parametrize("engine", ENGINES)
async def test_results_are_sorted_lines_with_paths_relative_to_the_root(docs: Path, engine: str) -> None:
    envelope = await call(docs, engine, query="Jazz")
    assert [(r["path"], r["line"], r["content"]) for r in envelope.data] == [
        (".hidden.md", 1, "Jazz hidden"),
        ("docs/a.md", 2, "YAML Jazz is semantic"),
        ("docs/deep/b.md", 2, "Jazz hands"),
        ("docs/notes.txt", 1, "Jazz in a txt"),
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_scope_glob_case_and_context(docs: Path, engine: str) -> None:
    envelope = await call(docs, engine, query="jazz", scope="docs", glob="*.md", ignore_case=True, context=1)
    assert envelope.data == [
        {
            "path": "docs/a.md",
            "line": 2,
            "content": "YAML Jazz is semantic",
            "context": ["# Title", "YAML Jazz is semantic", "more"],
        },
        {
            "path": "docs/a.md",
            "line": 4,
            "content": "yaml jazz again",
            "context": ["more", "yaml jazz again", ""],
        },
        {
            "path": "docs/deep/b.md",
            "line": 2,
            "content": "Jazz hands",
            "context": ["nothing", "Jazz hands", ""],
        },
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_regex_and_crlf_lines(docs: Path, engine: str) -> None:
    envelope = await call(docs, engine, query=r"return '\w+'", scope="src")
    assert envelope.data == [{"path": "src/x.py", "line": 2, "content": "    return 'jazz'", "context": []}]


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_path_glob_and_max_results(docs: Path, engine: str) -> None:
    envelope = await call(docs, engine, query="Jazz", glob="docs/**/*.md", max_results=1)
    assert [(r["path"], r["line"]) for r in envelope.data] == [("docs/a.md", 2)]


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_scope_outside_the_root_is_refused(docs: Path, engine: str) -> None:
    for scope in ("..", "/etc", "out_link.md"):
        assert (await call(docs, engine, query="Jazz", scope=scope)).error.code == "PERMISSION_DENIED"


@pytest.mark.parametrize("engine", ENGINES)
async def test_an_invalid_pattern_is_invalid_args(docs: Path, engine: str) -> None:
    envelope = await call(docs, engine, query="(unclosed")
    assert envelope.error.code == "INVALID_ARGS"
    assert envelope.error.message.startswith("invalid regular expression '(unclosed'")


async def test_both_engines_agree_on_a_larger_tree(tmp_path: Path) -> None:
    if shutil.which("rg") is None:
        pytest.skip("no ripgrep")
    root = tmp_path / "tree"
    for i in range(30):
        folder = root / f"pkg{i % 5}" / f"mod{i}"
        folder.mkdir(parents=True)
        (folder / f"f{i}.py").write_text(
            "".join(f"def func_{i}_{j}(x):\n    return x * {j}\n" for j in range(40))
        )
    results = {
        engine: (await call(root, engine, query=r"def func_\d+_3\d\(", max_results=1000)).data
        for engine in ("rg", "python")
    }
    assert results["rg"] == results["python"]
    assert len(results["rg"]) == 300


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_directory_swapped_for_a_symlink_mid_search_never_leaks(
    tmp_path: Path, engine: str, exchanging: Callable[[Path, Path], AbstractContextManager[None]]
) -> None:
    """Sandboxed code shares the workspace: it may exchange a directory and a symlink out while we search."""
    root, host = tmp_path / "root", tmp_path / "host"
    (root / "d").mkdir(parents=True)
    host.mkdir()
    (root / "d" / "f.txt").write_text("harmless token\n")
    (host / "f.txt").write_text("SECRET token\n")
    (root / "e").symlink_to(host)
    with exchanging(root / "d", root / "e"):
        seen = [r["content"] for _ in range(60) for r in (await call(root, engine, query="token")).data]
    assert seen
    assert not [line for line in seen if "SECRET" in line]


@pytest.mark.skipif(shutil.which("rg") is None, reason="no ripgrep")
def test_ripgrep_itself_never_sees_outside_the_root_while_a_directory_is_swapped(
    tmp_path: Path, exchanging: Callable[[Path, Path], AbstractContextManager[None]]
) -> None:
    """The helper, not only the tool's re-read: ripgrep runs sandboxed with the root as its only view, so a
    symlink swapped in mid-walk leads nowhere. (Run on the host, 33 of 150 such searches read the secret.)"""
    root, host = tmp_path / "root", tmp_path / "host"
    (root / "d").mkdir(parents=True)
    host.mkdir()
    (root / "d" / "f.txt").write_text("harmless token\n")
    (host / "f.txt").write_text("SECRET token\n")
    (root / "e").symlink_to(host)
    with exchanging(root / "d", root / "e"):
        found = [
            hit
            for _ in range(60)
            for hit in find_hits(
                "token", root, root=root, glob=None, ignore_case=False, limit=10, engine="rg"
            )[0]
        ]
    assert found
    assert [hit for hit in found if "SECRET" in hit.text or not hit.path.startswith(str(root))] == []


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_fifo_as_the_scope_answers_at_once(docs: Path, engine: str) -> None:
    os.mkfifo(docs / "trap")
    executor = Executor(search_pack([docs], engine=engine), policy=Policy(default_timeout_s=5))
    call = ToolCall(id="c1", name="search.lexical", arguments={"query": "x", "scope": "trap"}, why="Find x")
    started = time.monotonic()
    envelope = await executor.execute(call)
    assert envelope == OkEnvelope(data=[])
    assert time.monotonic() - started < 4


def test_the_tools_timeout_outlasts_ripgreps_deadline(docs: Path) -> None:
    """ripgrep is killed at its deadline; the call's own timeout comes later, so no call ends with it running."""
    spec = search_pack([docs]).get("search.lexical")
    assert spec is not None
    assert spec.spec.sandbox.timeout_ms == int(DEADLINE_S * 1000) + 5000


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's sandbox can see less than its caller")
@pytest.mark.skipif(shutil.which("rg") is None, reason="no ripgrep")
def test_files_only_their_owner_may_read_are_found_where_the_sandbox_cannot_idmap(
    docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as root, a read-only sandbox on a filesystem that cannot idmap reads only world-readable files
    monkeypatch.setattr(_search, "Sandbox", functools.partial(Sandbox, idmap=False))
    private = docs / "src" / "private.md"
    private.write_text("Jazz for root only\n")
    private.chmod(0o600)
    hits, _ = find_hits("Jazz for root", docs, root=docs, glob=None, ignore_case=False, limit=10)
    assert [(hit.path, hit.text) for hit in hits] == [(str(private), "Jazz for root only")]
