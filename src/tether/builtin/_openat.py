"""Open a path beneath a directory fd, atomically refusing any escape: `openat2(RESOLVE_BENEATH)`.

Checking a path and then opening it leaves a window in which a component can be swapped for a symlink (a
sandboxed program shares the workspace and can do exactly that). `openat2` resolves the whole path in the
kernel and fails with EXDEV if any step - `..`, an absolute symlink, a symlink out - leaves the directory.
Kernels before 5.6 (or seccomp profiles that hide openat2) get a walk with O_NOFOLLOW on every component,
which holds too, at the price of refusing all symlinks.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct

__all__ = ["open_beneath"]

_SYS_OPENAT2 = 437  # the same on x86_64 and aarch64 (asm-generic)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_openat2_works: bool | None = None


def open_beneath(root_fd: int, relative: str, flags: int, mode: int = 0o666) -> int:
    """Open `relative` (no leading `/`) beneath `root_fd` with `flags`; return the new fd.

    Raises:
        OSError: EXDEV when resolution would leave the root, ELOOP for a refused symlink, or the usual errnos.
    """
    global _openat2_works
    flags |= os.O_CLOEXEC
    if _openat2_works is not False:
        creates = flags & os.O_CREAT or flags & os.O_TMPFILE == os.O_TMPFILE  # O_TMPFILE includes O_DIRECTORY
        how_mode = mode if creates else 0  # openat2 refuses a mode otherwise
        resolve = _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS
        how = ctypes.create_string_buffer(struct.pack("QQQ", flags, how_mode, resolve))
        fd = _syscall(_SYS_OPENAT2, root_fd, os.fsencode(relative or "."), how, 24)
        if fd >= 0:
            _openat2_works = True
            return fd
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EPERM) or _openat2_works:
            raise OSError(err, os.strerror(err), relative)
        _openat2_works = False
    return _walk(root_fd, relative, flags, mode)


def _walk(root_fd: int, relative: str, flags: int, mode: int) -> int:
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), relative)
    if not parts:
        return os.open(".", flags, mode, dir_fd=root_fd)
    current = root_fd
    try:
        for part in parts[:-1]:
            _refuse_symlink(part, current)
            step = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=current)
            if current != root_fd:
                os.close(current)
            current = step
        _refuse_symlink(parts[-1], current)
        return os.open(parts[-1], flags | os.O_NOFOLLOW, mode, dir_fd=current)
    finally:
        if current != root_fd:
            os.close(current)


def _refuse_symlink(name: str, dir_fd: int) -> None:
    # a pre-check for a clear error; O_NOFOLLOW on the open itself is what holds against a swap in between
    try:
        is_link = stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except FileNotFoundError:
        return
    if is_link:
        raise OSError(errno.ELOOP, "symlinks are not followed on this kernel (no openat2)", name)
