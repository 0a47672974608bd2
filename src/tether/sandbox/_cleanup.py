"""Removing a directory that untrusted code filled: iterative, fd-relative, never following a link.

`shutil.rmtree` recurses once per level (a 1,500-deep tree raises RecursionError) and gives up on a
directory its owner made unreadable. This walks with an explicit stack of directory fds, opening each with
O_NOFOLLOW beneath its parent's fd and making it writable first; a directory deeper than `_MAX_DEPTH` is
renamed up into the top directory and emptied from there, so any depth costs at most `_MAX_DEPTH` fds.
"""

from __future__ import annotations

import contextlib
import os
import stat

__all__ = ["remove_tree", "remove_tree_at"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_DEPTH = 32


def remove_tree(path: str | os.PathLike[str]) -> bool:
    """Remove `path` and everything below it; return whether it is gone. Never raises."""
    path = os.fspath(path)
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return True
        os.chmod(path, 0o700)
        top = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        _empty(top)
    except OSError:
        pass
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(path)
    return not os.path.lexists(path)


def remove_tree_at(parent: int, name: str) -> bool:
    """Remove the entry `name` of the directory `parent` (a directory fd) and everything below it, without
    following links; return whether it is gone. Never raises."""
    try:
        if not stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            os.unlink(name, dir_fd=parent)
            return True
    except FileNotFoundError:
        return True
    except OSError:
        return False
    top = _open_dir(parent, name)
    if top is None:
        return False
    try:
        _empty(top)
    except OSError:
        pass
    finally:
        os.close(top)
    try:
        os.rmdir(name, dir_fd=parent)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _empty(top: int) -> None:
    """Unlink files, remove emptied directories, hoist deep ones up into `top` (whose listing is read again
    each time the walk comes back to it, so hoisted directories are emptied in the same pass)."""
    fds = [top]
    names: list[str] = []
    stuck: list[set[str]] = [set()]  # per level: subdirectories that could not be opened or removed
    try:
        while fds:
            current = fds[-1]
            child = _next_subdir(current, stuck[-1])
            if child is None:
                if len(fds) == 1:
                    return
                os.close(fds.pop())
                stuck.pop()
                name = names.pop()
                try:
                    os.rmdir(name, dir_fd=fds[-1])
                except OSError:
                    stuck[-1].add(name)
                continue
            if len(fds) > _MAX_DEPTH:
                try:
                    os.rename(child, f".tether-rm-{os.urandom(8).hex()}", src_dir_fd=current, dst_dir_fd=top)
                except OSError:
                    stuck[-1].add(child)
                continue
            sub = _open_dir(current, child)
            if sub is None:
                stuck[-1].add(child)
                continue
            fds.append(sub)
            names.append(child)
            stuck.append(set())
    finally:
        for fd in fds[1:]:
            os.close(fd)


def _open_dir(parent_fd: int, name: str) -> int | None:
    with contextlib.suppress(OSError):
        os.chmod(name, 0o700, dir_fd=parent_fd, follow_symlinks=False)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except OSError:
        return None


def _next_subdir(dir_fd: int, skip: set[str]) -> str | None:
    """Unlink every non-directory in `dir_fd`; return a subdirectory not in `skip`, or None."""
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name not in skip:
                    return entry.name
                continue
            with contextlib.suppress(OSError):
                os.unlink(entry.name, dir_fd=dir_fd)
    return None
