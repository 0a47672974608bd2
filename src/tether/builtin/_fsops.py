"""File operations through `Roots`: every open is beneath a root, every write is atomic or append-only."""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from tether.exceptions import ToolError
from tether.types import ErrorCode

from ._paths import Located, Roots

__all__ = ["FsLimits", "copy", "list_dir", "make_dirs", "read_bytes", "write_atomic"]

_DIR = os.O_RDONLY | os.O_DIRECTORY


@dataclass(frozen=True, kw_only=True, slots=True)
class FsLimits:
    """Caps on what file tools read and write in one call."""

    read_bytes: int = 256 * 1024
    """The most of a file `fs.read` returns; past it `truncated` is true."""
    write_bytes: int = 4 * 1024 * 1024
    """The largest content `fs.write`, `fs.append` and `fs.patch` accept."""
    list_entries: int = 1000
    """The most entries `fs.ls` returns."""
    copy_bytes: int = 64 * 1024 * 1024
    """The most `fs.copy` copies in one call."""


@contextlib.contextmanager
def opened(roots: Roots, located: Located, flags: int, mode: int = 0o666, *, shown: str) -> Iterator[int]:
    fd = roots.open_located(located, flags, mode, shown=shown)
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def parent_of(roots: Roots, located: Located, *, shown: str) -> Iterator[tuple[int, str]]:
    """The directory fd holding `located`, and its last component (refusing the root itself)."""
    if not located.relative:
        raise ToolError(
            ErrorCode.INVALID_ARGS, f"{shown!r} is the root directory itself", suggestion="Name a file."
        )
    head, _, name = located.relative.rpartition("/")
    with opened(roots, Located(located.root, head), os.O_PATH | os.O_DIRECTORY, shown=shown) as fd:
        yield fd, name


def read_bytes(fd: int, limit: int) -> tuple[bytes, bool]:
    """Up to `limit` bytes from `fd`, and whether there was more."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        raise ToolError(
            ErrorCode.INVALID_ARGS, "that path is a directory", suggestion="Use fs.ls for directories."
        )
    if not stat.S_ISREG(mode):
        raise ToolError(ErrorCode.INVALID_ARGS, "that path is not a regular file", suggestion="Use fs.ls.")
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    return data[:limit], len(data) > limit


def write_atomic(roots: Roots, located: Located, data: bytes, *, shown: str) -> None:
    """Replace the file's content all at once: a temporary sibling, then rename.

    An existing symlink is followed only beneath the root (a link out is PERMISSION_DENIED).
    """
    try:
        located = roots.within(roots.resolve_located(located, shown=shown))
    except ToolError as exc:
        if exc.code != ErrorCode.NOT_FOUND:
            raise
    with parent_of(roots, located, shown=shown) as (dir_fd, name):
        tag = uuid.uuid4().hex[:8]
        tmp = f".{name}.{tag}.tmp"
        if len(tmp.encode()) > 255:  # a name near the limit still gets a sibling the kernel accepts
            tmp = f".tether-write.{tag}.tmp"
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd
            )
        except OSError as exc:
            raise roots.os_error(exc, shown) from None
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise roots.os_error(exc, shown) from None


def list_dir(fd: int, limit: int) -> tuple[list[dict[str, object]], bool]:
    entries: list[dict[str, object]] = []
    with os.scandir(fd) as it:
        names = sorted(e.name for e in it)
    for name in names[:limit]:
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        entries.append(
            {"name": name, "type": _kind(st.st_mode), "size": st.st_size, "modified": _iso(st.st_mtime)}
        )
    return entries, len(names) > limit


def make_dirs(roots: Roots, located: Located, *, shown: str) -> bool:
    """Create the directory and its parents, one component at a time beneath the root; True if it was new."""
    parts = located.relative.split("/") if located.relative else []
    created = False
    for i, part in enumerate(parts):
        parent = Located(located.root, "/".join(parts[:i]))
        with opened(roots, parent, os.O_PATH | os.O_DIRECTORY, shown=shown) as dir_fd:
            try:
                os.mkdir(part, 0o755, dir_fd=dir_fd)
                created = True
            except FileExistsError:
                pass
            except OSError as exc:
                raise roots.os_error(exc, shown) from None
    with opened(roots, located, os.O_PATH | os.O_DIRECTORY, shown=shown):
        pass  # it exists and is a directory beneath the root (ENOTDIR otherwise)
    return created


def copy(roots: Roots, src: Located, dst: Located, budget: int, *, shown: tuple[str, str]) -> tuple[int, int]:
    """Copy a file or a directory tree; symlinks are copied as links. Returns (files, bytes)."""
    with opened(roots, src, os.O_RDONLY | os.O_NOFOLLOW, shown=shown[0]) as fd:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            data, more = read_bytes(fd, budget)
            if more:
                raise _too_big(budget)
            write_atomic(roots, dst, data, shown=shown[1])
            return 1, len(data)
    inside = not src.relative or dst.relative == src.relative or dst.relative.startswith(src.relative + "/")
    if dst.root == src.root and inside:
        raise ToolError(
            ErrorCode.INVALID_ARGS, "cannot copy a directory into itself", suggestion="Pick another dst."
        )
    make_dirs(roots, dst, shown=shown[1])
    files = total = 0
    with opened(roots, src, _DIR, shown=shown[0]) as fd, os.scandir(fd) as it:
        names = sorted((e.name, e.is_symlink()) for e in it)
    for name, is_link in names:
        child_src = Located(src.root, f"{src.relative}/{name}" if src.relative else name)
        child_dst = Located(dst.root, f"{dst.relative}/{name}" if dst.relative else name)
        if is_link:
            with opened(roots, src, _DIR, shown=shown[0]) as src_fd:
                target = os.readlink(name, dir_fd=src_fd)
            with (
                parent_of(roots, child_dst, shown=shown[1]) as (dir_fd, leaf),
                contextlib.suppress(FileExistsError),
            ):
                os.symlink(target, leaf, dir_fd=dir_fd)
            continue
        n, size = copy(roots, child_src, child_dst, budget - total, shown=shown)
        files, total = files + n, total + size
    return files, total


def _too_big(budget: int) -> ToolError:
    return ToolError(
        ErrorCode.QUOTA_EXCEEDED, f"copy exceeds the {budget}-byte limit", suggestion="Copy smaller parts."
    )


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
