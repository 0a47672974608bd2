"""The fork server: sandboxes start from a small helper process, with the same guarantees as a direct fork."""

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from tether.sandbox import Sandbox, _zygote
from tether.sandbox import (
    _forkserver as forkserver,  # the helper under test
)
from tether.sandbox._bwrap import find_bwrap


@pytest.fixture(params=["bwrap"])
def spawn_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The fork server starts bubblewrap: only the one-bubblewrap-per-run path uses it."""
    monkeypatch.setattr(_zygote, "enabled", False)
    return request.param


def _server_pid() -> int:
    server = forkserver._server  # pyright: ignore[reportPrivateUsage]
    assert server is not None
    assert server.alive
    return server.proc.pid


def test_runs_start_from_the_server_and_keep_their_results(sandbox: Sandbox) -> None:
    result = sandbox.run(["sh", "-c", "echo out; echo err >&2; exit 3"], stdin="ignored")
    assert (result.stdout, result.stderr, result.exit_code) == ("out\n", "err\n", 3)
    assert Path(f"/proc/{_server_pid()}").exists()


def test_bubblewrap_is_the_servers_child_not_tethers(sandbox: Sandbox) -> None:
    sandbox.run(["true"])
    server = _server_pid()
    marker = f"{time.time_ns()}"
    runner = threading.Thread(target=sandbox.run, args=(["sleep", "2", marker],))
    runner.start()
    found: list[str] = []
    ours: list[str] = []
    try:
        for _ in range(300):
            found = [cmd for cmd in map(_cmdline, _children(server)) if marker in cmd]
            ours = [cmd for cmd in map(_cmdline, _children(os.getpid())) if marker in cmd]
            if found:
                break
            time.sleep(0.01)
    finally:
        runner.join()
    assert found
    assert found[0].startswith(f"{find_bwrap()}\x00")
    assert ours == []


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_only_stdio_reaches_the_sandbox(sandbox: Sandbox) -> None:
    """The cgroup and user-namespace fds the pre-exec step uses are closed before bubblewrap starts."""
    result = sandbox.run(["ls", "/proc/self/fd"])
    assert result.stdout.split() == ["0", "1", "2", "3"]  # 3: ls reading the directory


def test_signals_python_ignores_are_restored_for_the_sandbox(sandbox: Sandbox) -> None:
    result = sandbox.run(["sh", "-c", "grep -E '^SigIgn' /proc/self/status"])
    ignored = int(result.stdout.split()[1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1) | 1 << (signal.SIGXFSZ - 1))


def test_a_dead_server_is_replaced_and_its_runs_end_killed(sandbox: Sandbox) -> None:
    sandbox.run(["true"])
    first = _server_pid()
    results: list[int] = []
    runner = threading.Thread(target=lambda: results.append(sandbox.run(["sleep", "30"]).exit_code))
    runner.start()
    time.sleep(0.5)
    os.kill(first, signal.SIGKILL)
    runner.join(timeout=20)
    assert not runner.is_alive()
    assert results != [0]
    assert sandbox.run(["echo", "again"]).stdout == "again\n"
    assert _server_pid() != first


def test_without_a_server_runs_fork_tether_instead(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forkserver, "_server", None)
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    assert sandbox.run(["echo", "fallback"]).stdout == "fallback\n"


def test_a_server_that_never_answers_is_given_up_on(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """e.g. tether embedded where sys.executable is not Python: one slow fallback, not one per run."""
    monkeypatch.setattr(forkserver, "_server", None)
    monkeypatch.setattr(forkserver, "enabled", True)
    monkeypatch.setattr(sys, "executable", "/bin/false")
    assert sandbox.run(["echo", "fallback"]).stdout == "fallback\n"
    assert not forkserver.enabled
    started = time.monotonic()
    assert sandbox.run(["echo", "again"]).stdout == "again\n"
    assert time.monotonic() - started < 5
