import json
import os
from pathlib import Path
from typing import Any

import pytest

from tether.builtin.fs import FsLimits, fs_pack
from tether.execution import Executor
from tether.types import ErrorEnvelope, ErrorInfo, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

HINT = "Use a path relative to the workspace root without '..', e.g. 'notes/todo.md'."


async def call(root: Path, name: str, *, limits: FsLimits | None = None, **arguments: Any) -> Any:
    executor = Executor(fs_pack([root], limits=limits))
    return await executor.execute(
        ToolCall(
            id="c1", name=name, arguments=arguments, why="Find the design notes to understand the parser"
        )
    )


async def test_every_fs_tool_requires_why_and_has_examples(tree: Path) -> None:
    specs = fs_pack([tree]).specs()
    assert [s.name for s in specs] == [
        "fs.ls",
        "fs.read",
        "fs.append",
        "fs.patch",
        "fs.write",
        "fs.mkdir",
        "fs.copy",
    ]
    assert all(s.requires_why and s.examples and s.category == "fs" for s in specs)
    assert {s.name: s.side_effects for s in specs} == {
        "fs.ls": "none",
        "fs.read": "none",
        "fs.append": "mutating",
        "fs.patch": "mutating",
        "fs.write": "idempotent",
        "fs.mkdir": "idempotent",
        "fs.copy": "idempotent",
    }


async def test_a_call_without_why_is_refused(tree: Path) -> None:
    envelope = await Executor(fs_pack([tree])).execute(
        ToolCall(id="c1", name="fs.ls", arguments={"path": "."})
    )
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "MISSING_WHY"


async def test_ls_lists_names_types_and_sizes(tree: Path) -> None:
    envelope = await call(tree, "fs.ls", path="sub")
    assert isinstance(envelope, OkEnvelope)
    assert [(e["name"], e["type"], e["size"]) for e in envelope.data] == [
        ("inner.txt", "file", 6),
        ("notes_link", "symlink", 12),
        ("up_up", "symlink", 5),
    ]
    assert envelope.data[0]["modified"].endswith("Z")


async def test_ls_caps_the_number_of_entries(tree: Path) -> None:
    envelope = await call(tree, "fs.ls", path=".", limits=FsLimits(list_entries=2))
    assert [e["name"] for e in envelope.data] == ["abs_link", "chain1", "... more than 2 entries"]


async def test_read_returns_content_line_count_and_truncation(tree: Path) -> None:
    assert (await call(tree, "fs.read", path="notes.txt")) == OkEnvelope(
        data={"content": "one\ntwo\nthree\n", "lines": 3, "truncated": False}
    )
    assert (await call(tree, "fs.read", path="notes.txt", range={"start": 2, "end": 3})).data["content"] == (
        "two\nthree\n"
    )
    truncated = await call(tree, "fs.read", path="notes.txt", limits=FsLimits(read_bytes=5))
    assert truncated.data == {"content": "one\nt", "lines": 2, "truncated": True}


async def test_read_refuses_binary_files_and_directories(tree: Path) -> None:
    (tree / "blob.bin").write_bytes(b"\x00\x01\x02")
    binary = await call(tree, "fs.read", path="blob.bin")
    directory = await call(tree, "fs.read", path="sub")
    assert (binary.error.code, directory.error.code) == ("INVALID_ARGS", "INVALID_ARGS")


async def test_read_of_a_symlink_out_is_the_envelope_a_model_sees(tree: Path) -> None:
    envelope = await call(tree, "fs.read", path="link_out")
    assert envelope == ErrorEnvelope(
        error=ErrorInfo(
            code="PERMISSION_DENIED",
            message="'link_out' leaves the allowed roots (through `..` or a symlink)",
            recoverable=True,
            suggestion=HINT,
        )
    )


CORPUS = [
    json.loads(line) for line in (Path(__file__).parent / "path_traversal.jsonl").read_text().splitlines()
]


@pytest.mark.parametrize("tool", ["fs.read", "fs.ls", "fs.append", "fs.write", "fs.mkdir"])
async def test_every_traversal_in_the_corpus_is_refused_by_every_path_tool(tree: Path, tool: str) -> None:
    extra: dict[str, Any] = {"fs.append": {"text": "x"}, "fs.write": {"content": "x"}}.get(tool, {})
    codes = [(await call(tree, tool, path=case["path"], **extra)).error.code for case in CORPUS]
    assert codes == ["PERMISSION_DENIED"] * len(CORPUS)
    assert (tree.parent / "outside" / "secret.txt").read_text() == "TOP-SECRET\n"


async def test_copy_refuses_traversal_on_either_side(tree: Path) -> None:
    out = await call(tree, "fs.copy", src="../outside/secret.txt", dst="stolen.txt")
    into = await call(tree, "fs.copy", src="notes.txt", dst="dir_out/planted.txt")
    assert (out.error.code, into.error.code) == ("PERMISSION_DENIED", "PERMISSION_DENIED")
    assert not (tree.parent / "outside" / "planted.txt").exists()
    assert not (tree / "stolen.txt").exists()


async def test_append_creates_then_appends(tree: Path) -> None:
    await call(tree, "fs.append", path="log.md", text="a\n")
    envelope = await call(tree, "fs.append", path="log.md", text="b\n")
    assert envelope == OkEnvelope(data={"path": "log.md", "bytes_written": 2})
    assert (tree / "log.md").read_text() == "a\nb\n"


async def test_write_replaces_atomically_and_follows_symlinks_only_inside(tree: Path) -> None:
    assert (await call(tree, "fs.write", path="new.txt", content="hello")).data == {
        "path": "new.txt",
        "bytes_written": 5,
    }
    assert (tree / "new.txt").read_text() == "hello"
    os.symlink("sub/inner.txt", tree / "inner_link")
    await call(tree, "fs.write", path="inner_link", content="replaced")
    assert (tree / "sub" / "inner.txt").read_text() == "replaced"
    assert (tree / "inner_link").is_symlink()
    assert (await call(tree, "fs.write", path="link_out", content="x")).error.code == "PERMISSION_DENIED"
    assert sorted(p.name for p in tree.iterdir() if p.name.endswith(".tmp")) == []


async def test_write_into_a_missing_directory_suggests_mkdir(tree: Path) -> None:
    envelope = await call(tree, "fs.write", path="no/such/file.txt", content="x")
    assert envelope.error.code == "NOT_FOUND"


async def test_write_caps_content_size(tree: Path) -> None:
    envelope = await call(tree, "fs.write", path="big.txt", content="x" * 11, limits=FsLimits(write_bytes=10))
    assert envelope.error.code == "QUOTA_EXCEEDED"


async def test_mkdir_creates_parents_and_is_idempotent(tree: Path) -> None:
    assert (await call(tree, "fs.mkdir", path="a/b/c")).data == {"path": "a/b/c", "created": True}
    assert (await call(tree, "fs.mkdir", path="a/b/c")).data == {"path": "a/b/c", "created": False}
    assert (tree / "a" / "b" / "c").is_dir()


async def test_copy_copies_files_and_trees(tree: Path) -> None:
    assert (await call(tree, "fs.copy", src="notes.txt", dst="copy.txt")).data["bytes"] == 14
    assert (tree / "copy.txt").read_text() == "one\ntwo\nthree\n"
    envelope = await call(tree, "fs.copy", src="sub", dst="sub2")
    assert envelope.data == {"src": "sub", "dst": "sub2", "files": 1, "bytes": 6}
    assert os.readlink(tree / "sub2" / "up_up") == "../.."  # copied as a link, still refused when used
    assert (
        await call(tree, "fs.read", path="sub2/up_up/outside/secret.txt")
    ).error.code == "PERMISSION_DENIED"


async def test_copy_of_a_directory_into_itself_is_refused(tree: Path) -> None:
    assert (await call(tree, "fs.copy", src="sub", dst="sub/deeper")).error.code == "INVALID_ARGS"


async def test_patch_applies_a_unified_diff(tree: Path) -> None:
    diff = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    assert (await call(tree, "fs.patch", path="notes.txt", diff=diff)).data == {
        "path": "notes.txt",
        "hunks_applied": 1,
    }
    assert (tree / "notes.txt").read_text() == "one\nTWO\nthree\n"


async def test_a_stale_patch_is_a_conflict_with_a_suggestion(tree: Path) -> None:
    diff = "@@ -1,2 +1,2 @@\n one\n-deux\n+DEUX\n"
    envelope = await call(tree, "fs.patch", path="notes.txt", diff=diff)
    assert envelope.error.code == "CONFLICT"
    assert (
        envelope.error.suggestion
        == "Read the file again with fs.read and make the diff against its current content."
    )
    assert (tree / "notes.txt").read_text() == "one\ntwo\nthree\n"


async def test_a_fifo_planted_in_the_workspace_never_hangs_a_tool(tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    cases: list[tuple[str, dict[str, Any]]] = [
        ("fs.read", {"path": "pipe"}),
        ("fs.append", {"path": "pipe", "text": "x"}),
        ("fs.copy", {"src": "pipe", "dst": "copy"}),
    ]
    for name, arguments in cases:
        envelope = await call(tree, name, **arguments)
        assert envelope.error.code == "INVALID_ARGS", name


@pytest.mark.parametrize("tool", ["fs.read", "fs.ls", "fs.append", "fs.write", "fs.mkdir"])
@pytest.mark.parametrize("path", ["a" * 300, "/".join(["b" * 200] * 25)], ids=["long name", "long path"])
async def test_a_name_too_long_for_the_file_system_is_the_models_to_fix(
    tree: Path, tool: str, path: str
) -> None:
    extra: dict[str, Any] = {"fs.append": {"text": "x"}, "fs.write": {"content": "x"}}.get(tool, {})
    envelope = await call(tree, tool, path=path, **extra)
    assert (envelope.error.code, envelope.error.recoverable) == ("INVALID_ARGS", True)
    assert envelope.error.message.endswith(
        "is longer than the file system allows (a name at most 255 bytes, a path 4095)"
    )
