"""`tether sandbox check`: what this machine supports, and a clear verdict."""

import re

import pytest
from typer.testing import CliRunner

from tether.cli import app
from tether.sandbox import CgroupSupport, _zygote

runner = CliRunner()
needs_bwrap = pytest.mark.usefixtures("bwrap_installed")  # skips without bubblewrap, fails under CI


@needs_bwrap
def test_check_lists_every_mechanism_and_passes_where_bubblewrap_works() -> None:
    result = runner.invoke(app, ["sandbox", "check"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for name in ("bubblewrap", "namespaces", "uid", "seccomp", "cgroups", "openat2", "sandboxed run"):
        assert f"│ {name} " in result.output
    assert re.search(r"│ start path +│ yes +│ zygotes \(up to 8", result.output)
    assert re.search(r"│ workspace quota +│ yes +│", result.output)


@needs_bwrap
def test_check_says_when_runs_fall_back_to_one_bubblewrap_each(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_zygote, "inside_source", lambda: "raise SystemExit(3)")
    _zygote.reset()
    try:
        result = runner.invoke(app, ["sandbox", "check"], env={"COLUMNS": "250"})
    finally:
        _zygote.reset()
    assert result.exit_code == 0, result.output
    assert "one bubblewrap per run" in result.output
    assert re.search(r"│ workspace quota +│ yes +│ .*laid by bubblewrap's pre-exec step", result.output)
    assert "sandboxed, with less isolation" in result.output


@needs_bwrap
def test_check_says_when_no_start_path_can_hold_the_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_zygote, "inside_source", lambda: "raise SystemExit(3)")

    def refused(workspace: str) -> str:
        return "mount the workspace overlay: EINVAL"

    monkeypatch.setattr("tether.sandbox._host.overlay_support", refused)
    _zygote.reset()
    try:
        result = runner.invoke(app, ["sandbox", "check"], env={"COLUMNS": "300"})
    finally:
        _zygote.reset()
    assert result.exit_code == 0, result.output
    assert re.search(
        r"│ workspace quota +│ no +│ none: no zygote, and the kernel refused the overlay \(mount the",
        result.output,
    )


def test_check_without_bubblewrap_fails_and_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tether.sandbox._host.find_bwrap", lambda: None)
    result = runner.invoke(app, ["sandbox", "check"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "apt-get install bubblewrap" in result.output
    assert "code cannot run sandboxed here (bubblewrap, namespaces)." in result.output


@needs_bwrap
def test_check_without_a_writable_cgroup_says_isolation_is_degraded(monkeypatch: pytest.MonkeyPatch) -> None:
    reason = "cgroup v1, but tether's cgroups are not writable by this user (run as root or delegate)"
    monkeypatch.setattr("tether.sandbox._host.cgroup_support", lambda: CgroupSupport(None, (), reason))
    result = runner.invoke(app, ["sandbox", "check"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert f"{reason}; memory and CPU are bounded per process only (rlimits)" in result.output
    assert "sandboxed, with less isolation (cgroups): see docs/sandbox.md." in result.output
