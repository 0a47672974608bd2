"""Zygotes: runs start from spare, already isolated children of one bubblewrap sandbox per configuration,
and nothing a run leaves reaches the next one."""

import os
import threading
import time
import uuid
from pathlib import Path

import pytest

from tether.sandbox import (
    Sandbox,
    SandboxLimits,
    SandboxProcess,
    _zygote,  # the helper under test
)


@pytest.fixture(params=["zygote"])
def spawn_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """These tests are about the zygote path itself."""
    monkeypatch.setattr(_zygote, "enabled", True)
    _zygote.reset()
    return request.param


_LEAVE_BEHIND = """
set -e
echo planted > /tmp/planted-{marker}
echo planted > /dev/shm/planted-{marker}
ipcmk -M 4096 > /dev/null
setsid python3 -c '
import socket, time
s = socket.socket(socket.AF_UNIX)
s.bind(b"\\0tether-{marker}")
s.listen(1)
time.sleep(60)
' {marker} > /dev/null 2>&1 < /dev/null &
sleep 0.3
echo left
"""

_LOOK = """
ls -A /tmp /dev/shm
ipcs -m | grep -c '^0x' || true
ps -eo pid=,comm= | awk '$1 != 1 && $2 == "python3"' | wc -l
python3 -c '
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(b"\\0tether-{marker}"); print("CONNECTED")
except OSError as e:
    print("refused", e.errno)
'
"""


def test_what_a_run_leaves_is_invisible_to_the_next(sandbox: Sandbox, workspace: Path) -> None:
    marker = uuid.uuid4().hex
    first = sandbox.run(["sh", "-c", _LEAVE_BEHIND.format(marker=marker)])
    assert (first.exit_code, first.stdout) == (0, "left\n"), first.stderr
    second = sandbox.run(["sh", "-c", _LOOK.format(marker=marker)])
    lines = second.stdout.split("\n")
    assert lines[:5] == ["/dev/shm:", "", "/tmp:", "0", "0"], second.stdout
    assert lines[5].startswith("refused"), second.stdout
    assert _zygote.live() == 1  # both runs came from one zygote: its spares share nothing
    deadline = time.monotonic() + 2
    while any(marker in _cmdline(pid) for pid in _pids()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(marker in _cmdline(pid) for pid in _pids())  # the survivor died with its run


def test_a_private_workspace_is_fresh_in_every_run() -> None:
    box = Sandbox(None, limits=SandboxLimits(timeout_s=10))
    assert box.run(["sh", "-c", "echo x > mine; ls"]).stdout == "mine\n"
    assert box.run(["ls", "-A"]).stdout == ""


def test_runs_come_from_a_spare_not_a_new_bubblewrap(sandbox: Sandbox) -> None:
    sandbox.run(["true"])
    (zygote,) = list(_zygote._zygotes.values())  # pyright: ignore[reportPrivateUsage]
    for _ in range(5):
        assert sandbox.run(["echo", "again"]).stdout == "again\n"
    assert list(_zygote._zygotes.values()) == [zygote]  # pyright: ignore[reportPrivateUsage]


def test_live_zygotes_are_capped(tmp_path: Path) -> None:
    for index in range(_zygote.MAX_ZYGOTES + 2):
        workspace = tmp_path / f"w{index}"
        workspace.mkdir()
        assert Sandbox(workspace).run(["true"]).exit_code == 0
        assert _zygote.live() <= _zygote.MAX_ZYGOTES


def test_a_workspace_made_again_gets_a_new_zygote(workspace: Path) -> None:
    Sandbox(workspace).run(["sh", "-c", "echo old > f"])
    (workspace / "f").unlink()
    workspace.rmdir()
    workspace.mkdir()
    (workspace / "g").write_text("new\n")
    assert Sandbox(workspace).run(["cat", "g"]).stdout == "new\n"


def test_where_no_zygote_can_be_made_runs_fall_back_to_bubblewrap(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_zygote, "inside_source", lambda: "raise SystemExit(3)")
    result = sandbox.run(["sh", "-c", "echo fell back"])
    assert result.stdout == "fell back\n"
    works, why = _zygote.status()
    assert not works
    assert "one bubblewrap per run" in why
    started = time.monotonic()
    assert sandbox.run(["echo", "again"]).stdout == "again\n"  # not tried again for this configuration
    assert time.monotonic() - started < 10
    _zygote.reset()


def test_a_killed_zygote_is_replaced(sandbox: Sandbox) -> None:
    sandbox.run(["true"])
    (zygote,) = list(_zygote._zygotes.values())  # pyright: ignore[reportPrivateUsage]
    assert isinstance(zygote.process, SandboxProcess)
    zygote.process.kill()
    deadline = time.monotonic() + 5  # its namespace (and spares) die a moment after bubblewrap
    while any("zygote's program" in _cmdline(pid) for pid in _pids()) and time.monotonic() < deadline:
        time.sleep(0.02)
    result = sandbox.run(["echo", "back"])
    assert result.stdout == "back\n", result
    assert _zygote.status()[0]


def test_a_run_right_after_its_zygote_exited_starts_in_a_new_one(sandbox: Sandbox) -> None:
    """Its spares outlive bubblewrap by a moment: one taken then would be killed with its namespace."""
    sandbox.run(["true"])
    (zygote,) = list(_zygote._zygotes.values())  # pyright: ignore[reportPrivateUsage]
    assert isinstance(zygote.process, SandboxProcess)
    zygote.process.kill()
    zygote.process.proc.wait(timeout=5)  # bubblewrap has exited; its spares may still be there
    for _ in range(3):
        result = sandbox.run(["echo", "back"])
        assert (result.stdout, result.exit_code) == ("back\n", 0), result
    (replacement,) = list(_zygote._zygotes.values())  # pyright: ignore[reportPrivateUsage]
    assert replacement is not zygote


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_concurrent_runs_share_one_zygote_and_keep_their_own_output(sandbox: Sandbox) -> None:
    results: dict[int, str] = {}

    def one(index: int) -> None:
        results[index] = sandbox.run(
            ["sh", "-c", f"echo {index} > /tmp/mine; sleep 0.2; cat /tmp/mine"]
        ).stdout

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: f"{i}\n" for i in range(6)}
    assert _zygote.live() == 1
