"""Class 4's second half: a host workspace has a disk quota. On the zygote path it is an overlay whose upper
layer is a tmpfs of `SandboxLimits.workspace_bytes`; the changes reach the host when the run ends, copied
back without following anything the code (or a concurrent writer) planted, and not at all past the quota."""

import os
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tether.exceptions import ToolError
from tether.sandbox import Sandbox, SandboxLimits, _zygote, run_for_tool
from tether.types import ErrorCode

_MiB = 1024 * 1024


@pytest.fixture(params=["zygote"])
def spawn_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The quota is the zygote path's (one bubblewrap per run binds the workspace itself; docs/sandbox.md)."""
    monkeypatch.setattr(_zygote, "enabled", True)
    _zygote.reset()
    return request.param


@pytest.fixture
def quota() -> SandboxLimits:
    return SandboxLimits(workspace_bytes=4 * _MiB, file_size_bytes=64 * _MiB, timeout_s=20)


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): ("dir" if p.is_dir() and not p.is_symlink() else p.read_text())
        for p in sorted(root.rglob("*"))
    }


def test_changes_reach_the_host_when_the_run_ends(workspace: Path) -> None:
    seen: list[bool] = []

    def watch() -> None:
        time.sleep(0.8)
        seen.append((workspace / "f").exists())

    watcher = threading.Thread(target=watch)
    watcher.start()
    result = Sandbox(workspace).run(["sh", "-c", "echo x > f; sleep 2"])
    watcher.join()
    assert result.exit_code == 0
    assert seen == [False]  # during the run the write lives in the overlay
    assert (workspace / "f").read_text() == "x\n"


def test_deletions_renames_and_new_trees_are_applied(workspace: Path) -> None:
    (workspace / "old").write_text("old")
    (workspace / "keep").write_text("keep")
    (workspace / "dd").mkdir()
    (workspace / "dd" / "inner").write_text("inner")
    (workspace / "gone").mkdir()
    (workspace / "gone" / "deep").mkdir()
    (workspace / "gone" / "deep" / "x").write_text("x")
    script = "rm old; rm -r gone; mv dd dd2; mkdir -p a/b; echo new > a/b/c; echo more >> keep"
    assert Sandbox(workspace).run(["sh", "-c", script]).exit_code == 0
    assert _files(workspace) == {
        "a": "dir",
        "a/b": "dir",
        "a/b/c": "new\n",
        "dd2": "dir",
        "dd2/inner": "inner",
        "keep": "keepmore\n",
    }


def test_writing_past_the_quota_keeps_nothing(workspace: Path, quota: SandboxLimits) -> None:
    (workspace / "before").write_text("before")
    script = "echo small > small; rm before; dd if=/dev/zero of=big bs=1M count=8 2>&1; true"
    result = Sandbox(workspace, limits=quota).run(["sh", "-c", script])
    assert "No space left on device" in result.stdout
    assert result.quota_exceeded is not None
    assert _files(workspace) == {"before": "before"}  # not even the small file, nor the deletion


def test_the_tool_answer_is_quota_exceeded(workspace: Path, quota: SandboxLimits) -> None:
    with pytest.raises(ToolError) as raised:
        run_for_tool(
            Sandbox(workspace, limits=quota),
            ["sh", "-c", "dd if=/dev/zero of=big bs=1M count=8"],
            timeout_s=20,
        )
    assert raised.value.code == ErrorCode.QUOTA_EXCEEDED
    assert "none of its changes to the workspace were kept" in raised.value.message
    assert list(workspace.iterdir()) == []


def test_sparse_files_count_at_their_full_size(workspace: Path, quota: SandboxLimits) -> None:
    """A 1 GiB sparse file takes no space on the tmpfs, but would on the host."""
    result = Sandbox(workspace, limits=quota).run(["sh", "-c", "truncate -s 60M a b c; ls"])
    assert result.exit_code == 0
    assert result.quota_exceeded is not None
    assert list(workspace.iterdir()) == []


def test_planted_symlinks_fifos_and_sockets_are_not_kept(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("host's")
    (workspace / "was_dir").mkdir()
    (workspace / "was_dir" / "f").write_text("f")
    script = (
        f"ln -s /etc etc; ln -s {outside} out; rm -r was_dir; ln -s {outside} was_dir; mkfifo fifo; "
        "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")'; echo ok > plain"
    )
    result = Sandbox(workspace).run(["sh", "-c", script])
    assert result.exit_code == 0, result.stderr
    assert _files(workspace) == {"plain": "ok\n"}
    assert _files(outside) == {"precious": "host's"}


def test_hard_links_become_separate_files(workspace: Path) -> None:
    (workspace / "keep").write_text("keep")
    script = "echo a > a; ln a b; ln keep keep2; echo changed > b"
    assert Sandbox(workspace).run(["sh", "-c", script]).exit_code == 0
    assert _files(workspace) == {"a": "changed\n", "b": "changed\n", "keep": "keep", "keep2": "keep"}
    assert [(workspace / n).stat().st_nlink for n in ("a", "b", "keep", "keep2")] == [1, 1, 1, 1]


def test_a_symlink_swapped_in_during_copy_back_is_never_followed(
    workspace: Path, tmp_path: Path, exchanging: Callable[[Path, Path], AbstractContextManager[None]]
) -> None:
    """A concurrent writer on the host swaps a workspace directory and a symlink to a host directory
    (renameat2 RENAME_EXCHANGE, atomic) while runs' changes are copied into that directory."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "d").mkdir()
    (workspace / "e").symlink_to(outside)
    box = Sandbox(workspace)
    script = "mkdir -p d; for i in $(seq 40); do echo $i > d/f$i; done; true"
    with exchanging(workspace / "d", workspace / "e"):
        for _ in range(15):
            box.run(["sh", "-c", script])
    assert list(outside.iterdir()) == []


def test_a_deep_tree_is_copied_to_a_depth_cap_without_failing(workspace: Path) -> None:
    code = (
        "import os\nfor _ in range(400):\n    os.mkdir('d'); os.chdir('d')\nopen('bottom', 'w').write('x')\n"
    )
    result = Sandbox(workspace).run(["python3", "-c", code])
    assert (result.exit_code, result.quota_exceeded) == (0, None)
    depth, here = 0, workspace
    while (here / "d").is_dir():
        here, depth = here / "d", depth + 1
    assert 200 <= depth < 400  # capped, and nothing outside was touched
    assert not os.path.exists(workspace / "bottom")


def test_a_survivor_still_writing_is_stopped_before_the_copy_back(workspace: Path) -> None:
    script = "setsid sh -c 'while :; do echo x >> bg; done' > /dev/null 2>&1 < /dev/null & sleep 0.3"
    assert Sandbox(workspace).run(["sh", "-c", script]).exit_code == 0
    size = (workspace / "bg").stat().st_size
    time.sleep(0.3)
    assert size > 0
    assert (workspace / "bg").stat().st_size == size  # nothing of the run writes any more
    assert (workspace / "bg").read_text() == "x\n" * (size // 2)  # and what was copied is whole
