"""Every built-in tool that takes a path, given hostile path strings: each answer is a clean envelope.

A refusal names what is wrong (INVALID_ARGS for a path no file can have, PERMISSION_DENIED for one that
would leave the roots), never INTERNAL, never shows what lies outside, and changes nothing outside.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether.builtin.exec import exec_pack
from tether.builtin.fs import fs_pack
from tether.builtin.memory import memory_pack
from tether.builtin.search import search_pack
from tether.execution import Executor
from tether.sandbox import SandboxLimits
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

WHY = "Check whether the file the user named is there"
DIFF = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-one\n+ONE\n"

# attack id -> (path, the code every tool answers with unless TOOL_EXCEPTIONS says otherwise)
ATTACKS: dict[str, tuple[str, str]] = {
    "nul_byte": ("notes.txt\x00.png", "PERMISSION_DENIED"),
    "lone_high_surrogate": ("\ud800", "INVALID_ARGS"),
    "lone_low_surrogate_inside": ("a/\udcff/b", "INVALID_ARGS"),
    "surrogate_escaped_byte": ("notes\udc80.txt", "INVALID_ARGS"),
    "name_over_255_bytes": ("n" * 256, "INVALID_ARGS"),
    "wide_name_over_255_bytes": ("\u00e9" * 128, "INVALID_ARGS"),
    "path_over_4095_bytes": ("/".join(["d" * 200] * 21), "INVALID_ARGS"),
    "a_megabyte_path": ("x" * (1 << 20), "INVALID_ARGS"),
    "parent_traversal": ("../outside/secret.txt", "PERMISSION_DENIED"),
    "percent_encoded_traversal": ("%2e%2e/outside/secret.txt", "PERMISSION_DENIED"),
    "absolute_outside": ("{outside}/secret.txt", "PERMISSION_DENIED"),
    "absolute_host_file": ("/etc/passwd", "PERMISSION_DENIED"),
    "symlink_escape": ("dir_out/secret.txt", "PERMISSION_DENIED"),
    "windows_separators": ("..\\outside\\secret.txt", "PERMISSION_DENIED"),
    "windows_drive": ("C:\\Windows\\win.ini", "PERMISSION_DENIED"),
    "windows_unc": ("\\\\server\\share\\secret.txt", "PERMISSION_DENIED"),
    "home_directory": ("~/.ssh/id_rsa", "PERMISSION_DENIED"),
}

Arguments = Callable[[str], dict[str, Any]]

# tool id -> (tool name, the arguments with the attacked path in one of them)
TOOLS: dict[str, tuple[str, Arguments]] = {
    "fs.ls": ("fs.ls", lambda p: {"path": p}),
    "fs.read": ("fs.read", lambda p: {"path": p}),
    "fs.append": ("fs.append", lambda p: {"path": p, "text": "x\n"}),
    "fs.patch": ("fs.patch", lambda p: {"path": p, "diff": DIFF}),
    "fs.write": ("fs.write", lambda p: {"path": p, "content": "x\n"}),
    "fs.mkdir": ("fs.mkdir", lambda p: {"path": p}),
    "fs.copy.src": ("fs.copy", lambda p: {"src": p, "dst": "copied.txt"}),
    "fs.copy.dst": ("fs.copy", lambda p: {"src": "notes.txt", "dst": p}),
    "terminal.run.cwd": ("terminal.run", lambda p: {"cmd": ["true"], "cwd": p}),
    "python.exec.file_name": ("python.exec", lambda p: {"code": "1", "files": {p: "x"}}),
    "memory.summarize.target": (
        "memory.summarize",
        lambda p: {"target_paths": [p], "into_path": "summary.md"},
    ),
    "memory.summarize.into": (
        "memory.summarize",
        lambda p: {"target_paths": ["notes.txt"], "into_path": p},
    ),
    "memory.advise.hot": ("memory.advise", lambda p: {"hot": [{"path": p, "why": "being fixed"}]}),
    "search.lexical.scope": ("search.lexical", lambda p: {"query": "TOP", "scope": p}),
}

TOOL_EXCEPTIONS: dict[tuple[str, str], str] = {
    # a hint only names a path (reading it later goes through the roots, which refuse the escape)
    ("memory.advise.hot", "symlink_escape"): "ok",
    # python.exec writes its files in a private directory inside the sandbox: a name is only a name there
    ("python.exec.file_name", "symlink_escape"): "ok",
}


def _expected(tool_id: str, attack: str) -> str:
    return TOOL_EXCEPTIONS.get((tool_id, attack), ATTACKS[attack][1])


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("attack", list(ATTACKS))
@pytest.mark.parametrize("tool_id", list(TOOLS))
async def test_a_hostile_path_gets_a_clean_envelope_from_every_tool(
    tree: Path, tool_id: str, attack: str, request: pytest.FixtureRequest
) -> None:
    expected = _expected(tool_id, attack)
    name, arguments = TOOLS[tool_id]
    if expected == "ok" and name == "python.exec":
        request.getfixturevalue("bwrap_installed")
    outside = tree.parent / "outside"
    before = _snapshot(outside)
    tools = (
        fs_pack([tree])
        | exec_pack(tree, enabled=True, limits=SandboxLimits(timeout_s=10))
        | memory_pack([tree])
        | search_pack([tree], engine="python")
    )
    path = ATTACKS[attack][0].replace("{outside}", str(outside))

    envelope = await Executor(tools).execute(ToolCall(id="c1", name=name, arguments=arguments(path), why=WHY))

    assert "TOP-SECRET" not in envelope.model_dump_json()
    assert _snapshot(outside) == before
    if expected == "ok":
        assert isinstance(envelope, OkEnvelope)
        return
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.recoverable) == (expected, True)
    assert envelope.error.suggestion
    assert len(envelope.error.message) < 400  # a megabyte path is cut when shown


async def test_a_lone_surrogate_in_a_path_says_where_it_is_and_what_to_do(tree: Path) -> None:
    envelope = await Executor(fs_pack([tree])).execute(
        ToolCall(id="c1", name="fs.read", arguments={"path": "notes/\ud800.md"}, why=WHY)
    )
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.model_dump() == {
        "code": "INVALID_ARGS",
        "message": "path 'notes/\\ud800.md' is not Unicode text (a lone surrogate, '\\ud800', at character 6), "
        "so no file can have this name",
        "recoverable": True,
        "suggestion": "Send text only; write a surrogate pair as the one character it encodes. A name fs.ls "
        "shows with \ufffd cannot be named; rename it first.",
        "details": None,
    }


async def test_an_over_long_name_is_refused_before_the_kernel_sees_it(tree: Path) -> None:
    envelope = await Executor(fs_pack([tree])).execute(
        ToolCall(id="c1", name="fs.write", arguments={"path": "n" * 300, "content": "x"}, why=WHY)
    )
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "INVALID_ARGS"
    assert envelope.error.message.endswith(
        "is longer than the file system allows (a name at most 255 bytes, a path 4095)"
    )
    assert envelope.error.suggestion == "Use a shorter file name, or fewer nested directories."


async def test_names_at_the_kernels_limits_still_work(tree: Path) -> None:
    name = "n" * 255
    executor = Executor(fs_pack([tree]))
    envelope = await executor.execute(
        ToolCall(id="c1", name="fs.write", arguments={"path": name, "content": "x"}, why=WHY)
    )
    assert isinstance(envelope, OkEnvelope)
    assert (tree / name).read_text() == "x"


# tool -> the arguments with a hostile text (not a path) in one of them, and what the refusal names
TEXTS: dict[str, tuple[str, dict[str, Any], str]] = {
    "fs.write.content": ("fs.write", {"path": "w.txt", "content": "a\ud800"}, "content is not Unicode text"),
    "fs.append.text": ("fs.append", {"path": "w.txt", "text": "\udfff"}, "text is not Unicode text"),
    "fs.patch.diff": (
        "fs.patch",
        {"path": "notes.txt", "diff": DIFF.replace("+ONE", "+\ud800")},
        "diff is not Unicode text",
    ),
    "search.lexical.query_surrogate": ("search.lexical", {"query": "\ud800"}, "query is not Unicode text"),
    "search.lexical.glob_surrogate": (
        "search.lexical",
        {"query": "one", "glob": "*\udc80"},
        "glob is not Unicode text",
    ),
    "search.lexical.query_nul": ("search.lexical", {"query": "one\x00"}, "query holds a NUL byte"),
}


ENGINES = [(case, "python") for case in TEXTS] + [
    (case, "rg") for case in TEXTS if case.startswith("search.")
]


@pytest.mark.parametrize(("case", "engine"), ENGINES)
async def test_a_text_argument_no_file_or_program_can_take_is_invalid_args(
    tree: Path, case: str, engine: str, request: pytest.FixtureRequest
) -> None:
    name, arguments, says = TEXTS[case]
    if engine == "rg":
        request.getfixturevalue("bwrap_installed")  # ripgrep runs only sandboxed
    before = (tree / "notes.txt").read_bytes()
    tools = fs_pack([tree]) | search_pack([tree], engine=engine)
    envelope = await Executor(tools).execute(ToolCall(id="c1", name=name, arguments=arguments, why=WHY))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "INVALID_ARGS"
    assert says in envelope.error.message
    assert envelope.error.suggestion
    assert (tree / "notes.txt").read_bytes() == before
    assert not (tree / "w.txt").exists()
