"""Idmapped mounts: when tether runs as root, the sandbox's uid sees the workspace as its own without any chown.

A mount can carry an idmapping taken from a user namespace (Linux 5.12+, most local filesystems). With a
namespace whose uid_map is `OWNER SANDBOX 1`, files owned on disk by OWNER appear to the sandbox's uid as its
own, and files it creates are stored on disk as OWNER's. The workspace keeps its owner on the host; without
support the sandbox falls back to handing the workspace over (chown).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import subprocess
import time
from functools import cache

__all__ = ["idmapped_tree", "move_tree", "supported", "userns_fd"]

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_REC = 0x4000
_MS_PRIVATE = 0x40000
_SYS_OPEN_TREE = 428  # the same on x86_64 and aarch64 (asm-generic)
_SYS_MOVE_MOUNT = 429
_SYS_MOUNT_SETATTR = 442
_OPEN_TREE_CLONE = 1
_AT_FDCWD = -100
_AT_EMPTY_PATH = 0x1000
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_IDMAP = 0x00100000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


@cache
def userns_fd(owner_uid: int, owner_gid: int, sandbox_uid: int) -> int | None:
    """An fd of a user namespace mapping OWNER to the sandbox uid (kept for the process's life), or None."""
    try:
        holder = subprocess.Popen(
            ["sleep", "30"],
            preexec_fn=lambda: _check(_libc.unshare(_CLONE_NEWUSER), "unshare(CLONE_NEWUSER)"),
        )
    except (OSError, subprocess.SubprocessError):
        return None
    try:
        for _ in range(200):  # until the child has exec'd inside its new namespace
            if os.readlink(f"/proc/{holder.pid}/ns/user") != os.readlink("/proc/self/ns/user"):
                break
            time.sleep(0.001)
        proc = f"/proc/{holder.pid}"
        with open(f"{proc}/uid_map", "w") as f:
            f.write(f"{owner_uid} {sandbox_uid} 1\n")
        with open(f"{proc}/setgroups", "w") as f:
            f.write("deny\n")
        with open(f"{proc}/gid_map", "w") as f:
            f.write(f"{owner_gid} {sandbox_uid} 1\n")
        return os.open(f"{proc}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    finally:
        holder.kill()
        holder.wait()


def idmapped_tree(path: str, ns_fd: int) -> int:
    """A detached copy of the mount at `path`, idmapped through `ns_fd` (call in a private mount namespace)."""
    tree = _check(
        _libc.syscall(_SYS_OPEN_TREE, _AT_FDCWD, os.fsencode(path), _OPEN_TREE_CLONE | os.O_CLOEXEC),
        "open_tree",
    )
    attr = ctypes.create_string_buffer(struct.pack("QQQQ", _MOUNT_ATTR_IDMAP, 0, 0, ns_fd))
    _check(_libc.syscall(_SYS_MOUNT_SETATTR, tree, b"", _AT_EMPTY_PATH, attr, 32), "mount_setattr(IDMAP)")
    return tree


def move_tree(tree: int, target: str) -> None:
    _check(
        _libc.syscall(_SYS_MOVE_MOUNT, tree, b"", _AT_FDCWD, os.fsencode(target), _MOVE_MOUNT_F_EMPTY_PATH),
        "move_mount",
    )
    os.close(tree)


@cache
def supported(device: int, sample: str, ns_fd: int) -> bool:
    """Whether the filesystem holding `sample` (on `device`) accepts idmapped mounts; tried once per device."""

    def attempt() -> None:
        _check(_libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        _check(_libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "make / private")
        idmapped_tree(sample, ns_fd)

    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(["true"], preexec_fn=attempt, check=True)
        return True
    return False
