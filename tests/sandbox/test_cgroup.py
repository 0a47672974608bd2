"""Which cgroup hierarchy a sandbox uses: v2 or v1, detected, and a clear reason when neither is writable."""

import errno
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


class FakeKernel:
    """A cgroupfs in a directory, with the one kernel rule at stake: a non-root group that holds processes
    cannot enable controllers for its children (EBUSY). Writing a pid to `cgroup.procs` moves it; a pid that
    has exited is ESRCH; `forks` pids appear in the parent while the first move happens."""

    def __init__(
        self, parent: Path, pids: list[str], *, exited: frozenset[str] = frozenset(), forks: int = 0
    ):
        self.parent, self.exited, self.forks = parent, exited, forks
        parent.mkdir(parents=True)
        (parent / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
        (parent / "cgroup.subtree_control").write_text("")
        (parent / "cgroup.procs").write_text("\n".join(pids))
        self.busy = 0

    def write(self, path: Path, text: str) -> None:
        if path.name == "cgroup.subtree_control" and (path.parent / "cgroup.procs").read_text().split():
            self.busy += 1
            raise OSError(errno.EBUSY, "Device or resource busy")
        if path.name == "cgroup.procs":
            procs = self.parent / "cgroup.procs"
            left = [p for p in procs.read_text().split() if p != text]
            if text in self.exited:  # it was listed, and is gone by the time it is moved
                procs.write_text("\n".join(left))
                raise ProcessLookupError(errno.ESRCH, "No such process")
            if self.forks:
                self.forks -= 1
                left.append(f"9{self.forks}")
            procs.write_text("\n".join(left))
            text = "\n".join([*path.read_text().split(), text]) if path.exists() else text
        path.write_text(text)


def _v2_in(root: Path, own: str, monkeypatch: pytest.MonkeyPatch, kernel: FakeKernel) -> None:
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    monkeypatch.setattr(_cgroup, "_ROOT", root)
    monkeypatch.setattr(_cgroup, "_own_cgroups", lambda: {"": own})
    monkeypatch.setattr(_cgroup, "_write", kernel.write)


def test_a_delegated_v2_group_holding_processes_moves_them_into_a_leaf_and_enables_the_controllers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = tmp_path / "system.slice" / "app.service"
    kernel = FakeKernel(parent, ["101", "102", "103"], exited=frozenset({"102"}), forks=1)
    _v2_in(tmp_path, "/system.slice/app.service", monkeypatch, kernel)
    support = cgroup_support()
    assert (support.version, support.parents) == (2, (parent,))
    assert support.reason == (
        f"cgroup v2 (memory, pids, cpu controllers); the processes of {parent} were moved into "
        f"{parent / 'tether-leaf'} first"
    )
    assert (parent / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (parent / "cgroup.procs").read_text() == ""
    assert (parent / "tether-leaf" / "cgroup.procs").read_text().split() == ["101", "103", "90"]
    assert kernel.busy == 2  # refused with processes inside, then again for the one forked meanwhile


def test_a_v2_group_that_keeps_filling_up_degrades_to_rlimits_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = tmp_path / "box"
    kernel = FakeKernel(parent, ["101"], forks=1000)
    _v2_in(tmp_path, "/box", monkeypatch, kernel)
    support = cgroup_support()
    assert support.version is None
    assert support.reason == (
        f"cgroup v2, but controllers cannot be enabled below {parent}: [Errno 16] new processes kept "
        f"appearing in it while they moved into {parent / 'tether-leaf'}"
    )
    assert _cgroup.acquire(SandboxLimits()) is None  # runs go on with rlimits only


def test_an_empty_v2_group_enables_the_controllers_without_moving_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = tmp_path / "box"
    kernel = FakeKernel(parent, [])
    _v2_in(tmp_path, "/box", monkeypatch, kernel)
    assert cgroup_support().reason == "cgroup v2 (memory, pids, cpu controllers)"
    assert not (parent / "tether-leaf").exists()
    assert kernel.busy == 0


def test_a_v2_refusal_other_than_busy_is_reported_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = tmp_path / "box"
    kernel = FakeKernel(parent, ["101"])

    def refuse(path: Path, text: str) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    _v2_in(tmp_path, "/box", monkeypatch, kernel)
    monkeypatch.setattr(_cgroup, "_write", refuse)
    assert cgroup_support().reason == (
        f"cgroup v2, but controllers cannot be enabled below {parent}: [Errno 13] Permission denied"
    )
    assert not (parent / "tether-leaf").exists()
