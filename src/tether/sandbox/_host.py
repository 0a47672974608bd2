"""What this machine gives the sandbox: each mechanism the threat model relies on, probed for real.

`tether sandbox check` prints these rows; docs/sandbox.md says what each one protects against.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tether.exceptions import SandboxUnavailable

from . import _zygote
from ._bwrap import find_bwrap
from ._cgroup import cgroup_support
from ._idmap import supported, userns_fd
from ._launch import overlay_support
from ._sandbox import DEFAULT_UID, Sandbox
from ._seccomp import UnsupportedArchitecture, sandbox_filter

__all__ = ["HostCheck", "check_host"]


@dataclass(frozen=True, slots=True)
class HostCheck:
    """One mechanism: whether it works here (`None`: not needed here) and what that means."""

    name: str
    ok: bool | None
    detail: str
    essential: bool = False
    """Without it code cannot run sandboxed at all."""


def check_host(workspace: str | os.PathLike[str] | None = None) -> list[HostCheck]:
    """Probe every mechanism the sandbox uses, on this machine, for `workspace` (default: the current
    directory's file system, where idmapping is decided)."""
    bwrap = find_bwrap()
    checks = [_bubblewrap(bwrap), _namespaces(bwrap), _identity(), _idmap(Path(workspace or Path.cwd()))]
    checks += [_seccomp(), _cgroups(), _openat2(), _js(), _ripgrep()]
    if bwrap is not None and checks[1].ok:
        checks += _timed_runs()
    return checks


def _bubblewrap(bwrap: str | None) -> HostCheck:
    if bwrap is None:
        return HostCheck(
            "bubblewrap",
            False,
            "not installed: apt-get install bubblewrap (code tools refuse until then)",
            True,
        )
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return HostCheck("bubblewrap", True, f"{version or 'bwrap'} at {bwrap}", True)


def _namespaces(bwrap: str | None) -> HostCheck:
    if bwrap is None:
        return HostCheck("namespaces", False, "untested: bubblewrap is missing", True)
    try:
        Sandbox(None).check()
    except SandboxUnavailable as exc:
        return HostCheck("namespaces", False, str(exc), True)
    return HostCheck(
        "namespaces", True, "user, pid, network, ipc, uts, cgroup and mount namespaces start", True
    )


def _identity() -> HostCheck:
    if os.geteuid() == 0:
        return HostCheck(
            "uid", True, f"tether runs as root: bubblewrap is started as uid {DEFAULT_UID}, never as root"
        )
    return HostCheck(
        "uid", True, f"tether runs as uid {os.geteuid()}; sandboxes run as uid {DEFAULT_UID} inside"
    )


def _idmap(workspace: Path) -> HostCheck:
    if os.geteuid() != 0:
        return HostCheck("idmapped workspace", None, "not needed: the workspace is already this user's")
    probe = workspace if workspace.is_dir() else Path(tempfile.gettempdir())
    st = probe.stat()
    ns_fd = userns_fd(st.st_uid, st.st_gid, DEFAULT_UID)
    if ns_fd is not None and supported(st.st_dev, str(probe), ns_fd):
        return HostCheck("idmapped workspace", True, f"{probe}'s file system idmaps: files keep their owner")
    return HostCheck(
        "idmapped workspace",
        False,
        f"{probe}'s file system cannot idmap: the workspace is chowned to the sandbox uid",
    )


def _seccomp() -> HostCheck:
    try:
        sandbox_filter(network=False)
    except UnsupportedArchitecture as exc:
        return HostCheck("seccomp", False, f"{exc}: no syscall filter", True)
    return HostCheck("seccomp", True, f"filter for {platform.machine()}: no network sockets, no setuid files")


def _cgroups() -> HostCheck:
    support = cgroup_support()
    if support.version is None:
        return HostCheck(
            "cgroups", False, f"{support.reason}; memory and CPU are bounded per process only (rlimits)"
        )
    return HostCheck("cgroups", True, f"{support.reason}: memory, processes and CPU bounded per sandbox tree")


def _openat2() -> HostCheck:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    how = ctypes.create_string_buffer(24)  # struct open_how {flags, mode, resolve}, all zero: O_RDONLY
    fd = libc.syscall(437, -100, b"/", how, 24)  # openat2(AT_FDCWD, "/", ...); 437 on x86_64 and aarch64
    if fd < 0:
        return HostCheck("openat2", False, "missing (kernel < 5.6): file tools refuse every symlink instead")
    os.close(fd)
    return HostCheck("openat2", True, "file tools resolve paths beneath their roots in the kernel")


def _js() -> HostCheck:
    if importlib.util.find_spec("_quickjs") is None:
        return HostCheck("js.exec engine", None, "not installed (pip install 'tether[js]'); js.exec refuses")
    return HostCheck(
        "js.exec engine", True, "QuickJS in pooled sandboxed workers, killed on timeout or cancel"
    )


def _ripgrep() -> HostCheck:
    if shutil.which("rg") is None:
        return HostCheck("ripgrep", None, "not installed: search.lexical uses its Python engine")
    return HostCheck("ripgrep", True, "search.lexical runs it inside the sandbox, the root read-only")


def _timed_runs() -> list[HostCheck]:
    """Time `true` in a private and in a host workspace, and say which start path those runs took."""
    with tempfile.TemporaryDirectory(prefix="tether-check-") as workspace:
        times: list[float] = []
        ok = True
        for box in (Sandbox(None), Sandbox(workspace)):
            box.run(["true"])  # the first run pays one-time probes (and makes the zygote)
            for _ in range(5):
                started = time.perf_counter()
                ok = box.run(["true"]).exit_code == 0 and ok
                times.append((time.perf_counter() - started) * 1000)
        works, path = _zygote.status()
        quota = _quota(works, workspace)
    run = HostCheck(
        "sandboxed run", ok, f"`true` took {statistics.median(times):.1f} ms (median of 10)", True
    )
    start = HostCheck("start path", works, path)
    return [run, start, quota]


def _quota(zygotes: bool, workspace: str) -> HostCheck:
    capped = (
        "a host workspace is an overlay capped at SandboxLimits.workspace_bytes; changes reach it at the end"
    )
    if zygotes:
        return HostCheck("workspace quota", True, capped)
    if (why := overlay_support(workspace)) is None:
        return HostCheck("workspace quota", True, f"{capped} (laid by bubblewrap's pre-exec step)")
    return HostCheck(
        "workspace quota",
        False,
        f"none: no zygote, and the kernel refused the overlay ({why}); RLIMIT_FSIZE per file only, "
        "and a run writes straight into the workspace",
    )
