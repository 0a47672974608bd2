"""What the child does between fork and exec of bwrap: rlimits and, when tether runs as root, dropping root.

A sandbox whose host uid is 0 would be exempt from RLIMIT_NPROC (the kernel never counts root's processes, so
a fork bomb could exhaust the host's pids), so as root bwrap is started as an unprivileged uid. That uid may
not be able to reach the workspace (e.g. below a 0700 home), so the child first enters a private mount
namespace, opens each source, mounts a small tmpfs over `/tmp` there and bind-mounts each source onto it
through its fd (a source under /tmp stays reachable); bwrap then finds every source at a path any uid can
traverse. The host's mount table is untouched.

On the plain path (one bubblewrap per run) a writable host workspace gets the same disk quota as a
zygote's spare: the child lays an overlay over the path bubblewrap binds (the workspace below, read-only;
every change in an upper layer on a tmpfs of `SandboxLimits.workspace_bytes`) and sends tether an fd of the
upper layer, which tether measures and copies back once the run's processes are gone (`_copyback`). As root
that happens in the staging namespace; as an ordinary user in a user namespace of its own first (its own
uid mapped to itself), where bubblewrap then nests its sandbox.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import socket
import stat
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ._idmap import idmapped_tree, move_tree
from ._limits import SandboxLimits

__all__ = ["STAGE", "Overlay", "lay_overlay", "overlay_support", "preexec", "rlimits"]

STAGE = "/tmp"
"""Where sources are staged in the child's private mount namespace (hiding, not changing, the host's /tmp)."""

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_RDONLY = 0x1
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
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


@dataclass(frozen=True, slots=True)
class Overlay:
    """The plain path's workspace quota: what the child lays over the workspace before bubblewrap starts."""

    path: str
    """Where bubblewrap finds the workspace in the child's mount namespace (staged as root)."""
    size: int
    """The upper layer's tmpfs: `SandboxLimits.workspace_bytes`."""
    sock: int
    """The socket the child sends an fd of the upper layer on."""
    userns: bool
    """Not root: enter a user namespace of its own (its uid and gid mapped to themselves) to mount."""


def lay_overlay(path: str, size: int) -> int:
    """Mount an overlay over `path` (in a private mount namespace): `path` below, read-only, and an upper
    layer on a fresh tmpfs of `size` bytes (inodes capped too), which hides under the overlay, out of reach
    of anything bound through `path`. Returns an fd of the upper layer."""
    lower = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        st = os.fstat(lower)
        inodes = max(1024, size // 1024)
        options = f"size={size},nr_inodes={inodes},mode=0700"
        _check(
            _mount(b"tether-quota", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options.encode()),
            "mount the quota tmpfs",
        )
        os.mkdir(f"{path}/upper", 0o700)
        os.mkdir(f"{path}/work", 0o700)
        with contextlib.suppress(OSError):  # an owner this user namespace does not map: left as it is
            os.chown(f"{path}/upper", st.st_uid, st.st_gid)
        os.chmod(f"{path}/upper", stat.S_IMODE(st.st_mode))
        upper = os.open(f"{path}/upper", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        work = os.open(f"{path}/work", os.O_PATH | os.O_CLOEXEC)
        try:
            # by fd: a host path may hold the commas and colons that separate overlay options
            layers = (
                f"lowerdir=/proc/self/fd/{lower},upperdir=/proc/self/fd/{upper},workdir=/proc/self/fd/{work}"
            )
            options = f"{layers},userxattr,redirect_dir=nofollow,metacopy=off,index=off"
            _check(
                _mount(b"overlay", path.encode(), b"overlay", _MS_NOSUID | _MS_NODEV, options.encode()),
                "mount the workspace overlay",
            )
        except BaseException:
            os.close(upper)
            raise
        finally:
            os.close(work)
    finally:
        os.close(lower)
    return upper


def _own_namespaces(userns: bool) -> None:
    """A private mount namespace (as an ordinary user: inside a user namespace mapping its own ids)."""
    if userns:
        uid, gid = os.getuid(), os.getgid()
        _check(_unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare(CLONE_NEWUSER | CLONE_NEWNS)")
        for name, text in (
            ("uid_map", f"{uid} {uid} 1\n"),
            ("setgroups", "deny"),
            ("gid_map", f"{gid} {gid} 1\n"),
        ):
            fd = os.open(f"/proc/self/{name}", os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
    else:
        _check(_unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(_mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "make / private")


def _send_upper(sock: int, upper: int) -> None:
    channel = socket.socket(fileno=sock)
    try:
        socket.send_fds(channel, [b"u"], [upper])
    finally:
        channel.detach()
        os.close(upper)


def overlay_support(workspace: str) -> str | None:
    """Why the plain path cannot lay its quota overlay over `workspace` here, or None when it can: tried once
    per file system, for real, in a throwaway child's private mount namespace (nothing the host sees)."""
    device = os.stat(workspace).st_dev
    if device not in _overlay_support:
        _overlay_support[device] = _try_overlay(workspace, userns=os.geteuid() != 0)
    return _overlay_support[device]


_overlay_support: dict[int, str | None] = {}


def _try_overlay(sample: str, *, userns: bool) -> str | None:
    failure: list[str] = []

    def attempt() -> None:
        try:
            _own_namespaces(userns)
            os.close(lay_overlay(sample, 1 << 20))
        except OSError as exc:
            os.write(2, str(exc).encode())
            raise

    try:
        done = subprocess.run(["true"], preexec_fn=attempt, capture_output=True, check=False)
        if done.returncode != 0:
            failure.append(done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}")
    except (OSError, subprocess.SubprocessError) as exc:
        failure.append(str(exc) or type(exc).__name__)
    return failure[0] if failure else None


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
    overlay: Overlay | None = None,
    cgroup_fds: Sequence[int] = (),
) -> Callable[[], None]:
    """The function Popen runs in the child before exec.

    Args:
        limits: rlimits to set (`None`: none, for a zygote, whose runs each set their own).
        nproc: the RLIMIT_NPROC value, or `None` to leave it as it is (a cgroup's pids.max bounds the tree).
        run_as: drop to this uid/gid (tether runs as root), or `None`.
        staged: (host path, name) pairs bind-mounted at `STAGE/name` first (only with `run_as`).
        idmap_fd: a user namespace whose idmapping the first staged source (the workspace) gets (see _idmap).
        overlay: the workspace quota to lay over `overlay.path` (see `lay_overlay`), or `None`.
        cgroup_fds: open `cgroup.procs` files the child joins first (while it may still write them).
    """
    pairs = [] if limits is None else rlimits(limits, nproc)
    mounts = [(path, f"{STAGE}/{name}") for path, name in staged]

    def child() -> None:
        for fd in cgroup_fds:
            os.write(fd, b"0")  # "0": the writing process itself, and so everything it starts
        # RLIMIT_NPROC first: a user namespace made below records its creator's as the bound of everything
        # in it (the kernel counts a uid's processes per user namespace and checks each level up)
        for which, value in pairs:
            if which == resource.RLIMIT_NPROC:
                resource.setrlimit(which, (value, value))
        if run_as is not None and mounts:
            _own_namespaces(userns=False)
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
        elif overlay is not None:
            _own_namespaces(overlay.userns)
        if overlay is not None:  # after the tmpfs joined the run's cgroup: its pages count there
            _send_upper(overlay.sock, lay_overlay(overlay.path, overlay.size))
        for which, value in pairs:  # last: a forked tether may map more than RLIMIT_AS allows
            resource.setrlimit(which, (value, value))
        if run_as is not None:
            os.setgroups([])
            os.setresgid(run_as, run_as, run_as)
            os.setresuid(run_as, run_as, run_as)

    return child
