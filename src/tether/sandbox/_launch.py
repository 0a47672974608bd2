"""What the child does between fork and exec of bwrap: rlimits and, when tether runs as root, dropping root.

A sandbox whose host uid is 0 would be exempt from RLIMIT_NPROC (the kernel never counts root's processes, so
a fork bomb could exhaust the host's pids), so as root bwrap is started as an unprivileged uid. That uid may
not be able to reach the workspace (e.g. below a 0700 home), so the child first enters a private mount
namespace, opens each source, mounts a small tmpfs over `/tmp` there and bind-mounts each source onto it
through its fd (a source under /tmp stays reachable); bwrap then finds every source at a path any uid can
traverse. The host's mount table is untouched.
"""

from __future__ import annotations

import ctypes
import os
import resource
from collections.abc import Callable, Sequence

from ._idmap import idmapped_tree, move_tree
from ._limits import SandboxLimits

__all__ = ["STAGE", "preexec", "rlimits"]

STAGE = "/tmp"
"""Where sources are staged in the child's private mount namespace (hiding, not changing, the host's /tmp)."""

_CLONE_NEWNS = 0x00020000
_MS_RDONLY = 0x1
_MS_REMOUNT = 0x20
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_PRIVATE = 0x40000

_libc = ctypes.CDLL(None, use_errno=True)  # loaded in the parent: dlopen after fork is not safe
_unshare = _libc.unshare
_mount = _libc.mount
_mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def rlimits(limits: SandboxLimits, nproc: int | None) -> list[tuple[int, int]]:
    """The (resource, value) pairs of one run's rlimits."""
    return [
        (resource.RLIMIT_AS, limits.address_space_bytes),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CORE, 0),
        *([] if nproc is None else [(resource.RLIMIT_NPROC, nproc)]),
    ]


def preexec(
    limits: SandboxLimits | None,
    nproc: int | None,
    run_as: int | None,
    staged: Sequence[tuple[str, str]],
    idmap_fd: int | None = None,
    cgroup_fds: Sequence[int] = (),
) -> Callable[[], None]:
    """The function Popen runs in the child before exec.

    Args:
        limits: rlimits to set (`None`: none, for a zygote, whose runs each set their own).
        nproc: the RLIMIT_NPROC value, or `None` to leave it as it is (a cgroup's pids.max bounds the tree).
        run_as: drop to this uid/gid (tether runs as root), or `None`.
        staged: (host path, name) pairs bind-mounted at `STAGE/name` first (only with `run_as`).
        idmap_fd: a user namespace whose idmapping the first staged source (the workspace) gets (see _idmap).
        cgroup_fds: open `cgroup.procs` files the child joins first (while it may still write them).
    """
    pairs = [] if limits is None else rlimits(limits, nproc)
    mounts = [(path, f"{STAGE}/{name}") for path, name in staged]

    def child() -> None:
        for fd in cgroup_fds:
            os.write(fd, b"0")  # "0": the writing process itself, and so everything it starts
        if run_as is not None and mounts:
            _check(_unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
            _check(_mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "make / private")
            # fds opened in this namespace: a bind mount's source must live in the caller's mount namespace
            fds = [os.open(path, os.O_PATH | os.O_CLOEXEC) for path, _ in mounts]
            tree = idmapped_tree(mounts[0][0], idmap_fd) if idmap_fd is not None else None
            _check(
                _mount(b"tether", STAGE.encode(), b"tmpfs", 0, b"mode=0755,size=64k"), "mount staging tmpfs"
            )
            for index, (fd, (_, target)) in enumerate(zip(fds, mounts, strict=True)):
                os.mkdir(target, 0o755)
                if index == 0 and tree is not None:
                    move_tree(tree, target)
                    os.close(fd)
                    continue
                _check(
                    _mount(f"/proc/self/fd/{fd}".encode(), target.encode(), None, _MS_BIND | _MS_REC, None),
                    "bind",
                )
                os.close(fd)
            _check(_mount(None, STAGE.encode(), None, _MS_REMOUNT | _MS_RDONLY, None), "remount staging ro")
        for which, value in pairs:
            resource.setrlimit(which, (value, value))
        if run_as is not None:
            os.setgroups([])
            os.setresgid(run_as, run_as, run_as)
            os.setresuid(run_as, run_as, run_as)

    return child
