"""Which cgroup hierarchy a sandbox uses: v2 or v1, detected, and a clear reason when neither is writable."""

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tether.sandbox import (
    SandboxLimits,
    _cgroup,  # pyright: ignore[reportPrivateUsage]  # detection's inputs are faked
    cgroup_support,
)


@pytest.fixture(autouse=True)
def _fresh_detection() -> Iterator[None]:  # pyright: ignore[reportUnusedFunction]  # autouse fixture
    cgroup_support.cache_clear()
    yield
    cgroup_support.cache_clear()


def test_a_unified_tree_with_the_controllers_is_v2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    monkeypatch.setattr(_cgroup, "_ROOT", tmp_path)
    monkeypatch.setattr(_cgroup, "_own_cgroups", lambda: {"": "/"})
    support = cgroup_support()
    assert (support.version, support.parents) == (2, (tmp_path,))
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"


def test_a_unified_tree_without_the_memory_controller_is_unusable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu pids\n")
    monkeypatch.setattr(_cgroup, "_ROOT", tmp_path)
    monkeypatch.setattr(_cgroup, "_own_cgroups", lambda: {"": "/"})
    assert cgroup_support() == _cgroup.CgroupSupport(
        None, (), f"cgroup v2, but {tmp_path} lacks the memory, pids or cpu controller"
    )


def test_v1_is_used_when_its_controllers_are_mounted_and_writable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cgroup, "_ROOT", Path("/nonexistent"))
    monkeypatch.setattr(
        _cgroup, "_v1_mounts", lambda: {c: Path(f"/sys/fs/cgroup/{c}") for c in ("memory", "pids", "cpu")}
    )
    monkeypatch.setattr(_cgroup, "_own_cgroups", lambda: {"memory": "/a/b", "pids": "/", "cpu": "/"})
    monkeypatch.setattr(os, "access", _always(True))
    support = cgroup_support()
    assert support.version == 1
    assert support.parents[0] == Path("/sys/fs/cgroup/memory/a/b")  # below tether's own group


def test_unwritable_v1_degrades_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cgroup, "_ROOT", Path("/nonexistent"))
    monkeypatch.setattr(
        _cgroup, "_v1_mounts", lambda: {c: Path(f"/sys/fs/cgroup/{c}") for c in ("memory", "pids", "cpu")}
    )
    monkeypatch.setattr(os, "access", _always(False))
    assert cgroup_support().reason == (
        "cgroup v1, but tether's cgroups are not writable by this user (run as root or delegate)"
    )
    assert _cgroup.acquire(SandboxLimits()) is None  # runs go on with rlimits only


def test_v1_without_a_controller_says_which(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cgroup, "_ROOT", Path("/nonexistent"))
    monkeypatch.setattr(_cgroup, "_v1_mounts", lambda: {"memory": Path("/sys/fs/cgroup/memory")})
    assert cgroup_support().reason == "cgroup v1 without the pids, cpu controller(s) mounted"


def _always(answer: bool) -> Callable[[object, int], bool]:
    def access(path: object, mode: int) -> bool:
        return answer

    return access


def test_a_v2_group_is_limited_read_and_killed_through_the_unified_files(tmp_path: Path) -> None:
    """The v2 interface, file by file (this machine's memory, pids and cpu controllers are bound to v1
    hierarchies, so v2's enforcement cannot run here: see docs/sandbox.md)."""
    group = _cgroup.Cgroup(2, (tmp_path,), (0, 0, 0))
    _cgroup._set_limits(group, (256 * 2**20, 32, 50_000))  # pyright: ignore[reportPrivateUsage]
    written = {
        n: (tmp_path / n).read_text() for n in ("memory.max", "memory.swap.max", "pids.max", "cpu.max")
    }
    assert written == {
        "memory.max": str(256 * 2**20),
        "memory.swap.max": "0",
        "pids.max": "32",
        "cpu.max": "50000 100000",
    }
    assert group.limits == (256 * 2**20, 32, 50_000)
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 3\noom_kill 2\noom_group_kill 0\n")
    assert group.oom_kills() == 2
    assert group.procs_files == (tmp_path / "cgroup.procs",)
    (tmp_path / "cgroup.kill").write_text("0")
    group.kill()
    assert (tmp_path / "cgroup.kill").read_text() == "1"  # the whole group at once
