"""Copying a run's changes from its overlay's upper layer back onto the host workspace, safely.

On the zygote path a host workspace is an overlay inside the sandbox: the workspace below, read-only, and
every change in an upper layer on a tmpfs of `SandboxLimits.workspace_bytes` (the disk quota). When the run
has ended (its processes are all dead, so the upper layer no longer changes) tether applies the changes:

- regular files: written to a fresh temporary file in the host directory (O_EXCL, O_NOFOLLOW), then renamed
  over the name, so whatever is there (a symlink planted meanwhile included) is replaced, never followed;
  modes keep their permission bits only (no setuid, setgid or sticky bits);
- directories: made, or opened without following links beneath their parent's fd; an opaque directory (the
  code removed one and made another of the same name) first loses what the host had in it;
- whiteouts (a name the code deleted): the host's entry is removed (a directory as a whole, fd-relative);
- symlinks, FIFOs, sockets and devices the code made are not kept (what they replaced is removed), nor are
  hard links (each name becomes a file of its own).

Before anything is written the upper layer is measured: if the tmpfs is full (the code wrote past the quota)
or the files' sizes add up past it (sparse files take no space on a tmpfs but would on the host), nothing is
copied and the run is `QUOTA_EXCEEDED`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field

from ._cleanup import remove_tree_at

__all__ = ["CopyBack", "copy_back", "over_quota"]

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPAQUE = "user.overlay.opaque"
_MAX_DEPTH = 256
_CHUNK = 1 << 20


@dataclass
class CopyBack:
    """What a copy-back did."""

    copied: int = 0
    removed: int = 0
    skipped: list[str] = field(default_factory=list[str])
    """Entries not kept: special files, links, and anything the host side changed under it meanwhile."""


def over_quota(upper: int, limit: int) -> str | None:
    """Why the run's changes pass the quota (its tmpfs full, or file sizes adding up past `limit`), or None.

    Walks depth first holding one fd per level (a directory of 100,000 subdirectories costs one fd, not
    100,000: tether's own fds are not the code's to spend). Never raises: what cannot be measured is over.
    """
    try:
        vfs = os.fstatvfs(upper)
        if vfs.f_bavail == 0:
            return f"it filled the workspace's {limit // 2**20} MiB"
        if vfs.f_favail == 0:
            return "it made more files than the workspace holds"
        return _measure(upper, limit)
    except OSError as exc:
        return f"its changes could not be measured ({exc.strerror or exc})"


def _measure(upper: int, limit: int) -> str | None:
    total = 0
    levels: list[tuple[int, list[str]]] = []  # each open directory on the path, and its subdirectories left
    try:
        size, below = _sizes(upper)
        total += size
        levels.append((os.dup(upper), below))
        while levels and total <= limit:
            fd, left = levels[-1]
            if not left:
                os.close(levels.pop()[0])
                continue
            name = left.pop()
            if len(levels) > _MAX_DEPTH:  # not copied either
                continue
            sub = os.open(name, _DIR, dir_fd=fd)
            levels.append((sub, []))
            size, below = _sizes(sub)
            total += size
            levels[-1] = (sub, below)
    finally:
        for fd, _ in levels:
            os.close(fd)
    if total > limit:
        return f"its files add up to more than the workspace's {limit // 2**20} MiB"
    return None


def _sizes(fd: int) -> tuple[int, list[str]]:
    """The sizes of the regular files in `fd` added up (a sparse file at its full size; each name of a hard
    link once, as each becomes a file of its own), and its subdirectories' names."""
    subdirectories: list[str] = []
    total = 0
    with os.scandir(fd) as entries:
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                total += max(st.st_size, st.st_blocks * 512)
            elif stat.S_ISDIR(st.st_mode):
                subdirectories.append(entry.name)
    return total, subdirectories


def copy_back(upper: int, workspace: str, *, owner: tuple[int, int] | None) -> CopyBack:
    """Apply the upper layer `upper` (a directory fd) onto `workspace`; `owner`: chown what is made (root).

    Depth first, holding two fds (the layer's directory and the host's) per level of the current path only.
    Never raises for what the code or a concurrent writer did: what cannot be applied is listed in
    `skipped`.
    """
    done = CopyBack()
    try:
        host = os.open(workspace, _DIR)
    except OSError:
        done.skipped.append(".")
        return done
    # each level: the layer's directory, the host's, where it is, and its subdirectories left to apply
    levels: list[tuple[int, int, str, list[str]]] = []
    try:
        try:
            levels.append((os.dup(upper), host, "", _apply_dir(upper, host, "", owner, done)))
        except OSError:
            os.close(host)
            raise
        while levels:
            source, target, where, left = levels[-1]
            if not left:
                levels.pop()
                os.close(source)
                os.close(target)
                continue
            name = left.pop()
            if len(levels) > _MAX_DEPTH:
                done.skipped.append(f"{where}{name}/")
                continue
            try:
                st = os.stat(name, dir_fd=source, follow_symlinks=False)
                opened = _open_dir(source, target, name, st, owner)
            except OSError:
                opened = None
            if opened is None:
                done.skipped.append(f"{where}{name}/")
                continue
            sub_source, sub_target = opened
            try:
                below = _apply_dir(sub_source, sub_target, f"{where}{name}/", owner, done)
            except OSError:
                os.close(sub_source)
                os.close(sub_target)
                done.skipped.append(f"{where}{name}/")
                continue
            levels.append((sub_source, sub_target, f"{where}{name}/", below))
    except OSError:
        done.skipped.append(".")
    finally:
        for source, target, _, _ in levels:
            os.close(source)
            os.close(target)
    return done


def _apply_dir(
    source: int, target: int, where: str, owner: tuple[int, int] | None, done: CopyBack
) -> list[str]:
    """Apply one directory's entries but its subdirectories; return those to descend into (names)."""
    below: list[str] = []
    with os.scandir(source) as entries:
        listed = list(entries)
    for entry in listed:
        name = entry.name
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # a whiteout: the code deleted it
                if _remove(target, name):
                    done.removed += 1
            elif stat.S_ISREG(st.st_mode):
                _copy_file(source, target, name, st, owner)
                done.copied += 1
            elif stat.S_ISDIR(st.st_mode):
                below.append(name)
            else:  # a symlink, FIFO, socket or device: what it replaced goes, it is not kept
                _remove(target, name)
                done.skipped.append(f"{where}{name}")
        except OSError:
            done.skipped.append(f"{where}{name}")
    return below


def _remove(parent: int, name: str) -> bool:
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(st.st_mode):
        return remove_tree_at(parent, name)
    os.unlink(name, dir_fd=parent)
    return True


def _copy_file(
    source: int, target: int, name: str, st: os.stat_result, owner: tuple[int, int] | None
) -> None:
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=source)
    try:
        temp = f".tether-copy-{os.urandom(6).hex()}"
        dst = os.open(
            temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=target
        )
        try:
            try:
                _copy_data(src, dst, st.st_size)
                if owner is not None:
                    os.fchown(dst, *owner)
                os.fchmod(dst, st.st_mode & 0o777)
                os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
            finally:
                os.close(dst)
            try:
                os.rename(temp, name, src_dir_fd=target, dst_dir_fd=target)
            except IsADirectoryError:  # the code replaced a directory with a file
                remove_tree_at(target, name)
                os.rename(temp, name, src_dir_fd=target, dst_dir_fd=target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=target)
            raise
    finally:
        os.close(src)


def _copy_data(src: int, dst: int, size: int) -> None:
    """Copy the file's `size` bytes (in the kernel: sendfile)."""
    offset = 0
    while offset < size:
        sent = os.sendfile(dst, src, offset, min(_CHUNK, size - offset))
        if sent == 0:
            break
        offset += sent


def _open_dir(
    source: int, target: int, name: str, st: os.stat_result, owner: tuple[int, int] | None
) -> tuple[int, int] | None:
    """The source and host directories for `name`, the host one made (or emptied, when opaque) first."""
    src = os.open(name, _DIR, dir_fd=source)
    try:
        opaque = os.getxattr(src, _OPAQUE) == b"y"
    except OSError:
        opaque = False
    try:
        try:
            existing = os.stat(name, dir_fd=target, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and (opaque or not stat.S_ISDIR(existing.st_mode)):
            _remove(target, name)  # a symlink or file there is removed, never followed
            existing = None
        if existing is None:
            os.mkdir(name, 0o700, dir_fd=target)
        dst = os.open(name, _DIR, dir_fd=target)
    except OSError:
        os.close(src)
        return None
    with contextlib.suppress(OSError):
        if existing is None and owner is not None:
            os.fchown(dst, *owner)
        os.fchmod(dst, st.st_mode & 0o777)
    return src, dst
