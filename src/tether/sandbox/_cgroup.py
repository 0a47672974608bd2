"""One cgroup per sandboxed run: memory, processes and CPU bounded for the whole process tree.

Rlimits are per process: 128 processes of 1 GiB each pass a 1 GiB RLIMIT_AS. A cgroup counts the tree
(tmpfs pages it writes included), and when it passes its memory limit the kernel's OOM killer ends it, which
the cgroup records (`oom_kill` in `memory.oom_control` on v1, `memory.events` on v2).

Both hierarchies are supported: v2 (one unified tree with the memory, pids and cpu controllers) where the
machine has it, v1 (a tree per controller) otherwise. Groups are made below tether's own cgroup, so limits
placed on tether still bound its sandboxes, and are reused between runs (making a v1 memory cgroup costs a
millisecond or more). On v2, a delegated group that holds processes itself (tether's own, in a container) has
them moved into a leaf child first, as the kernel requires before it enables controllers for children.
Where neither hierarchy is writable (an unprivileged user without a delegated subtree), `cgroup_support()`
says why and runs keep the per-process rlimits only.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ._limits import SandboxLimits

__all__ = ["Cgroup", "CgroupSupport", "acquire", "cgroup_support", "release"]

_ROOT = Path("/sys/fs/cgroup")
_CONTROLLERS = ("memory", "pids", "cpu")
_CPU_PERIOD_US = 100_000
_LEAF = "tether-leaf"
"""Where the processes of tether's own v2 group move when it must hold none itself (see `_enable_controllers`)."""
_MOVE_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class CgroupSupport:
    """What this machine offers for bounding a sandbox's whole tree."""

    version: int | None
    """2, 1, or `None` when no usable hierarchy is writable."""
    parents: tuple[Path, ...]
    """Where groups are made: one directory (v2) or one per controller, memory/pids/cpu (v1)."""
    reason: str
    """One line for people: what is used, or why nothing is."""


@dataclass(slots=True)
class Cgroup:
    """The group(s) one run is put in; `oom_before` is the OOM-kill count when the run started."""

    version: int
    dirs: tuple[Path, ...]
    limits: tuple[int, int, int]
    oom_before: int = 0

    @property
    def procs_files(self) -> tuple[Path, ...]:
        return tuple(d / "cgroup.procs" for d in self.dirs)

    def oom_kills(self) -> int:
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            for line in (self.dirs[0] / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def kill(self) -> None:
        """SIGKILL every process still in the group (v2: `cgroup.kill`, all at once)."""
        if self.version == 2 and (self.dirs[0] / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self.dirs[0] / "cgroup.kill").write_text("1")
            return
        for pid in self._pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def empty(self, wait_s: float) -> bool:
        """Whether the group emptied within `wait_s` (a pid namespace is torn down asynchronously)."""
        deadline = time.monotonic() + wait_s
        while self._pids():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    def _pids(self) -> list[int]:
        pids: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(p) for p in procs.read_text().split())
        return sorted(pids)


@cache
def cgroup_support() -> CgroupSupport:
    """Which cgroup hierarchy sandboxes can use here, tried once per process."""
    own = _own_cgroups()
    if (_ROOT / "cgroup.controllers").exists():  # a pure v2 machine: /sys/fs/cgroup is the unified tree
        return _detect_v2(_ROOT / own.get("", "/").lstrip("/"))
    mounts = _v1_mounts()
    missing = [c for c in _CONTROLLERS if c not in mounts]
    if missing:
        return CgroupSupport(None, (), f"cgroup v1 without the {', '.join(missing)} controller(s) mounted")
    parents = tuple(mounts[c] / own.get(c, "/").lstrip("/") for c in _CONTROLLERS)
    if not all(os.access(p, os.W_OK) for p in parents):
        return CgroupSupport(
            None,
            (),
            "cgroup v1, but tether's cgroups are not writable by this user (run as root or delegate)",
        )
    return CgroupSupport(1, parents, "cgroup v1 (memory, pids, cpu controllers)")


def _detect_v2(parent: Path) -> CgroupSupport:
    available: set[str] = (
        set((parent / "cgroup.controllers").read_text().split()) if parent.exists() else set()
    )
    if not set(_CONTROLLERS) <= available:
        return CgroupSupport(None, (), f"cgroup v2, but {parent} lacks the memory, pids or cpu controller")
    if not os.access(parent, os.W_OK):
        return CgroupSupport(None, (), f"cgroup v2, but {parent} is not writable by this user (delegate it)")
    try:
        moved = _enable_controllers(parent)
    except OSError as exc:
        return CgroupSupport(None, (), f"cgroup v2, but controllers cannot be enabled below {parent}: {exc}")
    note = f"; the processes of {parent} were moved into {parent / _LEAF} first" if moved else ""
    return CgroupSupport(2, (parent,), f"cgroup v2 (memory, pids, cpu controllers){note}")


def _enable_controllers(parent: Path) -> bool:
    """Enable the controllers for `parent`'s children; True if its processes had to move into a leaf first.

    A non-root v2 group that holds processes cannot give controllers to its children: the kernel answers
    EBUSY ("no internal processes", Documentation/admin-guide/cgroup-v2.rst). That is tether's own group in
    a container (its cgroup namespace's root is not the real root) or a delegated systemd unit. As the kernel
    documentation says (and container runtimes do), its processes, tether's included, move into a leaf child
    first; the leaf stays below `parent`, so every limit on `parent` still bounds them.
    """
    wanted = " ".join(f"+{c}" for c in _CONTROLLERS)
    try:
        _write(parent / "cgroup.subtree_control", wanted)
        return False
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise
    leaf = parent / _LEAF
    with contextlib.suppress(FileExistsError):
        leaf.mkdir()
    for _ in range(_MOVE_ATTEMPTS):  # a process forked while the others moved lands in `parent`: again
        for pid in (parent / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError):  # it exited meanwhile (ESRCH)
                _write(leaf / "cgroup.procs", pid)
        try:
            _write(parent / "cgroup.subtree_control", wanted)
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
    raise OSError(errno.EBUSY, f"new processes kept appearing in it while they moved into {leaf}")


def _write(path: Path, text: str) -> None:
    """One write to a cgroup file (what the kernel refuses arrives as OSError)."""
    path.write_text(text)


def _own_cgroups() -> dict[str, str]:
    """tether's cgroup path per v1 controller ('' for the v2 tree), from /proc/self/cgroup."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                found[name] = path
    return found


def _v1_mounts() -> dict[str, Path]:
    found: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 3 and fields[2] == "cgroup":
                for option in fields[3].split(","):
                    if option in _CONTROLLERS:
                        found[option] = Path(fields[1])
    return found


_pool: list[Cgroup] = []
_draining: list[tuple[Cgroup, float]] = []
_made: list[Cgroup] = []
_lock = threading.Lock()
_names = itertools.count()


def acquire(limits: SandboxLimits) -> Cgroup | None:
    """A group for one run, its limits set, or `None` where cgroups cannot be used."""
    support = cgroup_support()
    if support.version is None:
        return None
    wanted = (limits.memory_bytes, limits.processes, max(1000, int(limits.cpu_cores * _CPU_PERIOD_US)))
    with _lock:
        if _draining:
            _drain()
        group = next((g for g in _pool if g.limits == wanted), None) or (_pool[0] if _pool else None)
        if group is not None:
            _pool.remove(group)
    try:
        if group is None:
            group = _make(support)
        if group.limits != wanted:
            _set_limits(group, wanted)
    except OSError:
        return None
    group.oom_before = group.oom_kills()
    return group


def release(group: Cgroup, *, wait: bool = True) -> None:
    """Give a group back after its run: reused if it emptied, else killed and left to be removed at exit.

    `wait=False` (a run whose pid namespace the kernel is already taking down): do not wait for it to
    empty; it is pooled again once it has (checked when a group is next acquired)."""
    if not wait:
        with _lock:
            _draining.append((group, time.monotonic()))
        return
    if not group.empty(0.5):
        group.kill()
        if not group.empty(2.0):
            return
    with _lock:
        _pool.append(group)


def _drain() -> None:
    """Pool the draining groups that emptied; kill what is left in those that did not within 0.5 s, and
    give up on those still busy after 2.5 s (removed at exit). Under `_lock`."""
    now = time.monotonic()
    for entry in list(_draining):
        group, since = entry
        if group.empty(0):
            _draining.remove(entry)
            _pool.append(group)
        elif now - since > 2.5:
            _draining.remove(entry)
        elif now - since > 0.5:
            group.kill()


def _make(support: CgroupSupport) -> Cgroup:
    name = f"tether-{os.getpid()}-{next(_names)}"
    dirs = tuple(parent / name for parent in support.parents)
    for d in dirs:
        d.mkdir()
    group = Cgroup(support.version or 1, dirs, (0, 0, 0))
    with _lock:
        if not _made:
            atexit.register(_remove_all)
        _made.append(group)
    return group


def _set_limits(group: Cgroup, wanted: tuple[int, int, int]) -> None:
    memory, pids, quota = wanted
    if group.version == 2:
        (d,) = group.dirs
        (d / "memory.max").write_text(str(memory))
        with contextlib.suppress(OSError):  # no swap accounting: nothing to bound
            (d / "memory.swap.max").write_text("0")
        (d / "pids.max").write_text(str(pids))
        (d / "cpu.max").write_text(f"{quota} {_CPU_PERIOD_US}")
    else:
        mem, pid, cpu = group.dirs
        # memsw (memory + swap) exists only with swap accounting, and must stay >= the memory limit: set it
        # before a raise and after a cut
        with contextlib.suppress(OSError):
            (mem / "memory.memsw.limit_in_bytes").write_text(str(memory))
        (mem / "memory.limit_in_bytes").write_text(str(memory))
        with contextlib.suppress(OSError):
            (mem / "memory.memsw.limit_in_bytes").write_text(str(memory))
        (pid / "pids.max").write_text(str(pids))
        (cpu / "cpu.cfs_period_us").write_text(str(_CPU_PERIOD_US))
        (cpu / "cpu.cfs_quota_us").write_text(str(quota))
    group.limits = wanted


def _remove_all() -> None:
    for group in _made:
        group.kill()
        group.empty(1.0)
        for d in group.dirs:
            with contextlib.suppress(OSError):
                d.rmdir()
