"""Class 4's second half: a host workspace has a disk quota, on both start paths (conftest's `spawn_path`).
It is an overlay whose upper layer is a tmpfs of `SandboxLimits.workspace_bytes` (a zygote's spare lays it
inside the sandbox; with one bubblewrap per run, bubblewrap's pre-exec step lays it over the path it binds);
the changes reach the host when the run ends, copied back without following anything the code (or a
concurrent writer) planted, and not at all past the quota."""

import os
import resource
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tether.exceptions import ToolError
from tether.sandbox import Sandbox, SandboxLimits, run_for_tool
from tether.types import ErrorCode

_MiB = 1024 * 1024


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


def test_many_small_files_past_the_quota_keep_nothing(workspace: Path, quota: SandboxLimits) -> None:
    """Each file under the cap, together past it: the tmpfs (pages, then inodes) fills."""
    code = (
        "import os\n"
        "for i in range(20000):\n"
        "    try:\n"
        "        with open(f'f{i}', 'w') as f: f.write('x' * 700)\n"
        "    except OSError as e:\n"
        "        print('stopped', i, e.strerror); break\n"
    )
    result = Sandbox(workspace, limits=quota).run(["python3", "-c", code])
    assert result.stdout.startswith("stopped"), result.stdout + result.stderr
    assert result.quota_exceeded is not None
    assert list(workspace.iterdir()) == []


def test_empty_files_and_directories_past_the_inode_cap_keep_nothing(
    workspace: Path, quota: SandboxLimits
) -> None:
    code = (
        "import os\n"
        "for i in range(200000):\n"
        "    try:\n"
        "        os.mkdir(f'd{i}') if i % 2 else open(f'e{i}', 'w').close()\n"
        "    except OSError as e:\n"
        "        print('stopped', e.strerror); break\n"
    )
    result = Sandbox(workspace, limits=quota).run(["python3", "-c", code])
    assert result.stdout.startswith("stopped"), result.stdout + result.stderr
    assert result.quota_exceeded is not None
    assert list(workspace.iterdir()) == []


def test_hard_links_count_once_per_name(workspace: Path, quota: SandboxLimits) -> None:
    """Each link becomes a file of its own on the host: ten links of 1 MiB are 10 MiB there."""
    script = "head -c 1048576 /dev/zero > a; for i in $(seq 9); do ln a l$i; done; ls | wc -l"
    result = Sandbox(workspace, limits=quota).run(["sh", "-c", script])
    assert (result.exit_code, result.stdout) == (0, "10\n"), result.stderr
    assert result.quota_exceeded is not None
    assert list(workspace.iterdir()) == []


def test_a_hard_link_to_a_host_file_is_counted_and_kept_apart(workspace: Path, quota: SandboxLimits) -> None:
    (workspace / "big").write_bytes(bytes(3 * _MiB))
    result = Sandbox(workspace, limits=quota).run(["sh", "-c", "ln big big2; ln big big3; echo x >> big3"])
    assert result.quota_exceeded is not None  # 3 x 3 MiB once copied up
    assert sorted(p.name for p in workspace.iterdir()) == ["big"]
    assert (workspace / "big").stat().st_size == 3 * _MiB


def test_sparse_holes_punched_into_a_large_file_still_count(workspace: Path, quota: SandboxLimits) -> None:
    code = "import os\nf = os.open('s', os.O_CREAT | os.O_WRONLY)\nos.pwrite(f, b'x', 50 << 20)\n"
    result = Sandbox(workspace, limits=quota).run(["python3", "-c", code])
    assert result.exit_code == 0, result.stderr
    assert result.quota_exceeded is not None
    assert list(workspace.iterdir()) == []


def test_a_file_grown_by_a_survivor_after_the_run_is_not_copied_past_the_check(
    workspace: Path, quota: SandboxLimits
) -> None:
    """A detached writer keeps growing a file after the command exits: it is killed before the measure,
    so what is measured is what is copied (under the quota here: kept; it never grows after)."""
    script = (
        "setsid sh -c 'while :; do head -c 65536 /dev/zero >> grow; done' > /dev/null 2>&1 < /dev/null &"
        " sleep 0.2"
    )
    result = Sandbox(workspace, limits=quota).run(["sh", "-c", script])
    if result.quota_exceeded is None:
        size = (workspace / "grow").stat().st_size
        assert size <= quota.workspace_bytes
        time.sleep(0.3)
        assert (workspace / "grow").stat().st_size == size
    else:
        assert list(workspace.iterdir()) == []


def test_a_timed_out_run_keeps_what_it_wrote_within_the_quota_and_nothing_writes_after(
    workspace: Path, quota: SandboxLimits
) -> None:
    script = "echo done > first; while :; do echo x >> log; done"
    result = Sandbox(workspace, limits=quota).run(["sh", "-c", script], timeout_s=1)
    assert result.timed_out
    if result.quota_exceeded is None:
        assert (workspace / "first").read_text() == "done\n"
        size = (workspace / "log").stat().st_size
        time.sleep(0.3)
        assert (workspace / "log").stat().st_size == size
    else:  # the loop filled the quota within the second
        assert list(workspace.iterdir()) == []


def test_the_host_workspace_is_untouched_while_the_run_fills_its_quota(
    workspace: Path, quota: SandboxLimits
) -> None:
    """The writes go to RAM in the sandbox's cgroup, never to the host's disk (on both paths)."""
    seen: list[int] = []

    def watch() -> None:
        time.sleep(0.5)
        seen.append(sum(p.stat().st_size for p in workspace.rglob("*") if p.is_file()))

    watcher = threading.Thread(target=watch)
    watcher.start()
    script = "dd if=/dev/zero of=big bs=1M count=64 2>/dev/null; sleep 1"
    result = Sandbox(workspace, limits=quota).run(["sh", "-c", script])
    watcher.join()
    assert seen == [0]
    assert result.quota_exceeded is not None


@pytest.fixture
def few_fds() -> Iterator[int]:
    """tether with a common soft limit of open files (many hosts start processes with 1,024)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard))
    yield 512
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_wide_tree_does_not_spend_tethers_open_files(workspace: Path, few_fds: int) -> None:
    """Measuring and copying back hold fds along the current path only: 1,500 subdirectories (each with
    one below) would otherwise take 1,500+ of tether's fds at once, and the run would fail with EMFILE
    (and everything else tether does at that moment with it)."""
    code = "import os\nfor i in range(1500): os.makedirs(f'd{i}/e'); open(f'd{i}/e/f', 'w').write('x')\n"
    limits = SandboxLimits(workspace_bytes=64 * _MiB, timeout_s=30)
    result = Sandbox(workspace, limits=limits).run(["python3", "-c", code])
    assert (result.exit_code, result.quota_exceeded) == (0, None), result.stderr
    assert len(list(workspace.iterdir())) == 1500
    assert (workspace / "d1499" / "e" / "f").read_text() == "x"
    assert len(os.listdir("/proc/self/fd")) < few_fds


@pytest.mark.parametrize("spawn_path", ["bwrap"], indirect=True)  # a zygote's spare lays its own overlay
def test_where_the_kernel_refuses_the_overlay_runs_write_straight_through(
    workspace: Path, quota: SandboxLimits, spawn_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented degradation (old kernels, no zygote): no quota, RLIMIT_FSIZE per file only."""

    def refused(workspace: str) -> str:
        return "mount the workspace overlay: Invalid argument"

    monkeypatch.setattr("tether.sandbox._sandbox.overlay_support", refused)
    result = Sandbox(workspace, limits=quota).run(["sh", "-c", "head -c 5000000 /dev/zero > big; echo ok"])
    assert (result.stdout, result.quota_exceeded) == ("ok\n", None)
    assert (workspace / "big").stat().st_size == 5000000


def test_without_a_cgroup_nothing_writes_once_the_copy_back_starts(
    workspace: Path, quota: SandboxLimits, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no cgroup can be made (an ordinary user), the end of the run's processes is known from a pidfd
    of the spare, or of the sandbox's init that bubblewrap names: a detached writer and a run killed at its
    timeout leave nothing that writes after the copy-back."""

    def no_cgroup(limits: SandboxLimits) -> None:
        return None

    monkeypatch.setattr("tether.sandbox._sandbox.acquire", no_cgroup)
    box = Sandbox(workspace, limits=quota)
    detached = "setsid sh -c 'while :; do echo x >> bg; done' > /dev/null 2>&1 < /dev/null & sleep 0.3"
    assert box.run(["sh", "-c", detached]).exit_code == 0
    stuck = box.run(["sh", "-c", "while :; do echo y >> fg; done"], timeout_s=0.5)
    assert stuck.timed_out
    sizes = {name: (workspace / name).stat().st_size for name in ("bg", "fg")}
    time.sleep(0.3)
    assert {name: (workspace / name).stat().st_size for name in ("bg", "fg")} == sizes
    assert (workspace / "bg").read_text() == "x\n" * (sizes["bg"] // 2)
