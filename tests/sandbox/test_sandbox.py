import os
from pathlib import Path

import pytest

import tether.sandbox
from tether.exceptions import TetherRuntimeError
from tether.sandbox import Sandbox, SandboxLimits, SandboxResult, SandboxUnavailable
from tether.sandbox._idmap import supported, userns_fd


def test_a_run_returns_output_exit_code_and_timing(sandbox: Sandbox) -> None:
    result = sandbox.run(["sh", "-c", "echo out; echo err >&2; exit 4"])
    assert result == SandboxResult(
        stdout="out\n", stderr="err\n", exit_code=4, duration_ms=result.duration_ms
    )
    assert result.duration_ms > 0


def test_stdin_cwd_and_env_reach_the_command(sandbox: Sandbox, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    result = sandbox.run(
        ["sh", "-c", "pwd; cat; echo $GREETING $HOME"], cwd="sub", stdin="piped\n", env={"GREETING": "hi"}
    )
    assert result.stdout == "/workspace/sub\npiped\nhi /workspace\n"


def test_large_stdin_is_fed_without_deadlock(sandbox: Sandbox) -> None:
    data = "x" * 1_000_000
    assert sandbox.run(["wc", "-c"], stdin=data).stdout.strip() == "1000000"


def test_files_written_in_the_workspace_stay(sandbox: Sandbox, workspace: Path) -> None:
    sandbox.run(["sh", "-c", "echo kept > result.txt"])
    assert (workspace / "result.txt").read_text() == "kept\n"


def test_a_signal_death_is_128_plus_the_signal(sandbox: Sandbox) -> None:
    assert sandbox.run(["sh", "-c", "kill -TERM $$"]).exit_code == 128 + 15


def test_a_missing_program_fails_inside_the_sandbox(sandbox: Sandbox) -> None:
    result = sandbox.run(["no-such-program"])
    assert result.exit_code == 1
    assert "no-such-program" in result.stderr


def test_the_network_can_be_enabled_explicitly(workspace: Path) -> None:
    code = "import socket; s = socket.socket(); print('socket ok')"
    assert Sandbox(workspace, network=True).run(["python3", "-c", code]).stdout == "socket ok\n"


def test_extra_read_only_binds_are_visible_and_read_only(workspace: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("shared data")
    result = Sandbox(workspace, ro_binds=[shared]).run(
        ["sh", "-c", f"cat {shared}/data.txt; echo x > {shared}/y"]
    )
    assert result.stdout == "shared data"
    assert "Read-only file system" in result.stderr


@pytest.mark.without_bwrap
def test_without_bubblewrap_running_is_refused(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tether.sandbox._sandbox.find_bwrap", lambda: None)
    with pytest.raises(SandboxUnavailable, match=r"apt-get install bubblewrap"):
        Sandbox(workspace).run(["true"])


@pytest.mark.without_bwrap
def test_the_explicit_opt_out_runs_on_the_host_with_limits(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tether.sandbox._sandbox.find_bwrap", lambda: None)
    box = Sandbox(workspace, unsandboxed=True, limits=SandboxLimits(timeout_s=1))
    result = box.run(["sh", "-c", "pwd; sleep 5"])
    assert (result.sandboxed, result.timed_out, result.stdout) == (False, True, f"{workspace}\n")


def test_an_empty_argv_is_a_developer_error(sandbox: Sandbox) -> None:
    with pytest.raises(ValueError, match="argv must name a program"):
        sandbox.run([])


def test_as_root_the_workspace_keeps_its_owner_and_is_writable_inside(
    workspace: Path, limits: SandboxLimits
) -> None:
    if os.geteuid() != 0:
        pytest.skip("idmapping only applies when tether runs as root")
    ns_fd = userns_fd(0, 0, 65534)
    if ns_fd is None or not supported(workspace.stat().st_dev, str(workspace), ns_fd):
        pytest.skip("this kernel or filesystem cannot idmap mounts (the chown fallback is tested below)")
    (workspace / "notes.txt").write_text("by root\n")
    result = Sandbox(workspace, limits=limits).run(
        ["sh", "-c", "echo by sandbox >> notes.txt; stat -c %u notes.txt"]
    )
    assert result.stdout == "65534\n"  # the owner, as the sandbox sees it
    assert (workspace / "notes.txt").read_text() == "by root\nby sandbox\n"
    assert ((workspace / "notes.txt").stat().st_uid, workspace.stat().st_uid) == (0, 0)


def test_without_idmapping_the_workspace_is_handed_over(workspace: Path, limits: SandboxLimits) -> None:
    if os.geteuid() != 0:
        pytest.skip("the hand-over only applies when tether runs as root")
    (workspace / "notes.txt").write_text("by root\n")
    result = Sandbox(workspace, limits=limits, idmap=False).run(["sh", "-c", "echo more >> notes.txt"])
    assert result.exit_code == 0
    assert (workspace / "notes.txt").stat().st_uid == 65534


def test_a_read_only_sandbox_without_idmapping_says_it_does_not_read_the_whole_workspace(
    workspace: Path, limits: SandboxLimits
) -> None:
    # (the workspace is not handed over when read-only, so root's sandbox uid reads what any user may)
    sees_all = os.geteuid() != 0
    assert Sandbox(workspace, limits=limits, idmap=False, read_only=True).reads_whole_workspace() is sees_all
    assert Sandbox(workspace, limits=limits, idmap=False).reads_whole_workspace()


def test_the_public_api_resolves_and_exports_the_exception() -> None:
    # (sorted as ruff's RUF022 sorts: constants, classes, functions)
    assert all(getattr(tether.sandbox, name) is not None for name in tether.sandbox.__all__)
    assert issubclass(tether.sandbox.SandboxUnavailable, TetherRuntimeError)
