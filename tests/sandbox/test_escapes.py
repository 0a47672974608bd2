"""The escape classes of issue 12, attacked at the sandbox's level: whole-tree memory, RAM-backed file
systems, one output cap across channels, cleanup of what hostile code leaves."""

import os
import tempfile
from pathlib import Path

import pytest

from tether.sandbox import Sandbox, SandboxLimits, cgroup_support
from tether.sandbox._cleanup import (
    remove_tree,
)

_MiB = 1024 * 1024

# eight processes each touching 96 MiB: every one is under RLIMIT_AS, together they are 768 MiB
_SPREAD_OUT = """
import os, time
for i in range(8):
    if os.fork() == 0:
        block = bytearray(96 * 1024 * 1024)
        for j in range(0, len(block), 4096): block[j] = 1
        time.sleep(2)
        os._exit(0)
survived = sum(os.wait()[1] == 0 for _ in range(8))
print('survived', survived)
"""


def _needs_cgroups() -> None:
    support = cgroup_support()
    if support.version is None:
        pytest.skip(f"no writable cgroup here: {support.reason}")


def test_memory_spread_over_processes_is_bounded_for_the_whole_tree(workspace: Path) -> None:
    _needs_cgroups()
    limits = SandboxLimits(memory_bytes=256 * _MiB, address_space_bytes=512 * _MiB, timeout_s=20)
    result = Sandbox(workspace, limits=limits).run(["python3", "-c", _SPREAD_OUT])
    assert result.oom_killed
    assert result.stdout != "survived 8\n"


def test_a_run_within_its_memory_is_not_reported_as_oom(workspace: Path) -> None:
    _needs_cgroups()
    result = Sandbox(workspace, limits=SandboxLimits(memory_bytes=256 * _MiB)).run(
        ["python3", "-c", "print(1)"]
    )
    assert (result.stdout, result.oom_killed) == ("1\n", False)


def test_dev_shm_is_size_capped_and_dev_itself_is_read_only(sandbox: Sandbox, limits: SandboxLimits) -> None:
    result = sandbox.run(
        [
            "sh",
            "-c",
            "dd if=/dev/zero of=/dev/shm/big bs=1M count=64 2>&1; echo x > /dev/planted; df -k /dev/shm",
        ]
    )
    assert "No space left on device" in result.stdout
    assert "Read-only file system" in result.stderr
    assert int(result.stdout.splitlines()[-1].split()[1]) * 1024 == limits.tmp_bytes


def test_a_private_workspace_is_a_size_capped_tmpfs_that_dies_with_the_run() -> None:
    box = Sandbox(None, limits=SandboxLimits(workspace_bytes=2 * _MiB, timeout_s=10))
    result = box.run(["sh", "-c", "pwd; dd if=/dev/zero of=big bs=1M count=8 2>&1; ls"])
    assert result.stdout.splitlines()[0] == "/workspace"
    assert "No space left on device" in result.stdout
    assert box.run(["ls", "-A"]).stdout == ""  # a fresh one each run


def test_stdout_and_stderr_together_never_pass_the_cap(sandbox: Sandbox, limits: SandboxLimits) -> None:
    half = limits.output_bytes * 3 // 4
    code = f"import sys; sys.stdout.write('o' * {half}); sys.stdout.flush(); sys.stderr.write('e' * {half})"
    result = sandbox.run(["python3", "-c", code])
    assert result.truncated
    assert len(result.stdout) + len(result.stderr) == limits.output_bytes


def test_a_timeout_kills_what_the_cgroup_holds_even_outside_the_process_group(workspace: Path) -> None:
    _needs_cgroups()
    marker = f"unsandboxed-{os.getpid()}"
    code = f"import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\ntime.sleep(60)  # {marker}"
    box = Sandbox(workspace, unsandboxed=True, limits=SandboxLimits(timeout_s=1))
    result = box.run(["python3", "-c", code])
    assert result.timed_out
    left = [p for p in os.listdir("/proc") if p.isdigit() and marker.encode() in _cmdline(p)]
    assert left == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path("/proc", pid, "cmdline").read_bytes()
    except OSError:
        return b""


# ------------------------------------------------------------------------------------ cleanup


def test_a_1500_deep_tree_with_locked_directories_is_removed(tmp_path: Path) -> None:
    top = tmp_path / "scratch"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for level in range(1500):
        os.mkdir("d", dir_fd=fd)
        with open(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=fd), "w") as f:
            f.write(str(level))
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        if level % 300 == 1:
            os.fchmod(fd, 0o000)  # a directory its owner locked (once the walk down is past it)
        os.close(fd)
        fd = below
    os.close(fd)
    (top / "outside-link").symlink_to(tmp_path / "keep")
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "precious").write_text("x")
    assert remove_tree(top)
    assert not top.exists()
    assert (tmp_path / "keep" / "precious").read_text() == "x"  # a link was removed, never followed


def test_an_unsandboxed_private_workspace_is_removed_whatever_the_code_left(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    code = "import os\nfor _ in range(1500):\n    os.mkdir('d'); os.chdir('d')\nos.chmod('.', 0)\n"
    result = Sandbox(None, unsandboxed=True, limits=SandboxLimits(timeout_s=20)).run(["python3", "-c", code])
    assert result.exit_code == 0
    assert list(tmp_path.iterdir()) == []


def test_other_processes_of_the_sandbox_uid_do_not_eat_a_runs_process_budget(workspace: Path) -> None:
    """RLIMIT_NPROC counts the uid host-wide (idle js workers' threads, other sandboxes); with a cgroup the
    tree's own pids.max is the budget, so a run gets all of it."""
    _needs_cgroups()
    hog_code = (
        "import os, time\n"
        "for _ in range(40):\n"
        "    if os.fork() == 0: time.sleep(30); os._exit(0)\n"
        "print('up', flush=True)\n"
        "time.sleep(30)\n"
    )
    hog = Sandbox(None, limits=SandboxLimits(processes=64, timeout_s=30)).start(["python3", "-c", hog_code])
    try:
        assert hog.proc.stdout is not None
        assert hog.proc.stdout.readline() == b"up\n"
        code = "import os\npids = [os.fork() or os._exit(0) for _ in range(12)]\nprint('forked', len(pids))"
        result = Sandbox(workspace, limits=SandboxLimits(processes=32, timeout_s=10)).run(
            ["python3", "-c", code]
        )
    finally:
        hog.close()
    assert result.stdout == "forked 12\n", result.stderr
