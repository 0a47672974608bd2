"""The engine of search.lexical: ripgrep when installed, a pure-Python walk otherwise, same results.

Both search every regular file below the scope (hidden ones too, ignore files ignored), never follow
symlinks, skip binary files (a NUL byte), and report one hit per matching line, sorted by path and line.
ripgrep only finds the hits; context lines are read the same way for both.

ripgrep walks paths, and sandboxed code sharing the workspace can swap a directory for a symlink while it
walks (renameat2 RENAME_EXCHANGE in a loop), so it never runs on the host: it runs in the sandbox, as the
unprivileged uid, with the root bound read-only as its only view of the file system, under a deadline
that kills it. Where no sandbox can start, or the sandbox would not see every file (as root, read-only, on
a filesystem that cannot idmap), the Python engine (which walks by fd) is used instead.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tether.exceptions import ToolError
from tether.sandbox import Sandbox, SandboxLimits, SandboxUnavailable
from tether.types import ErrorCode

__all__ = ["DEADLINE_S", "Hit", "find_hits", "ripgrep"]


@dataclass(frozen=True, order=True, slots=True)
class Hit:
    path: str
    """The real path, as a string (sorting thousands of `Path`s is slow)."""
    line: int
    text: str


def ripgrep() -> str | None:
    return shutil.which("rg")


DEADLINE_S = 20.0
"""ripgrep is killed past this; search.lexical's own timeout is longer, so no call ends with it running."""
_RG_LIMITS = SandboxLimits(
    output_bytes=32 * 1024 * 1024, timeout_s=DEADLINE_S, memory_bytes=1024 * 1024 * 1024
)
"""ripgrep's sandbox: its hits (all of them: they are sorted before the first are returned) and a deadline."""


def find_hits(
    pattern: str,
    scope: Path,
    *,
    root: Path,
    glob: str | None,
    ignore_case: bool,
    limit: int,
    engine: str | None = None,
) -> tuple[list[Hit], bool]:
    """Matching lines below `scope` (a real path inside `root`), sorted; and whether there were more."""
    rg = ripgrep() if engine in (None, "rg") else None
    if engine == "rg" and rg is None:
        raise ToolError(ErrorCode.INTERNAL, "ripgrep is not installed", recoverable=False)
    if rg:
        box = Sandbox(root, read_only=True, limits=_RG_LIMITS, ro_binds=_outside_usr(rg))
        try:
            box.check()
        except SandboxUnavailable:
            if engine == "rg":
                raise ToolError(
                    ErrorCode.INTERNAL,
                    "ripgrep runs only sandboxed, and no sandbox can start here",
                    recoverable=False,
                ) from None
        else:
            # a forced ripgrep searches what the sandbox sees; otherwise the Python engine, which sees all
            if engine == "rg" or box.reads_whole_workspace():
                return _rg(box, rg, pattern, scope.relative_to(root), glob, ignore_case, limit)
    hits = sorted(_python(pattern, scope, glob, ignore_case), key=_order)
    return hits[:limit], len(hits) > limit


def _order(hit: Hit) -> tuple[str, int]:
    return hit.path, hit.line


def _first_two(item: tuple[str, int, str]) -> tuple[str, int]:
    return item[0], item[1]


def _outside_usr(program: str) -> list[str]:
    """The directory of `program` when the sandbox would not see it (it binds /usr only)."""
    folder = os.path.dirname(os.path.realpath(program))
    return [] if folder.startswith("/usr/") else [folder]


def _rg(
    box: Sandbox, rg: str, pattern: str, scope: Path, glob: str | None, ignore_case: bool, limit: int
) -> tuple[list[Hit], bool]:
    """ripgrep over `scope` (relative to the sandbox's root, bound read-only at /workspace)."""
    assert box.workspace is not None
    host_scope = box.workspace / scope
    argv = [
        os.path.realpath(rg),
        "--no-heading",
        "--line-number",
        "--with-filename",
        "--null",
        "--no-messages",
        "--color=never",
    ]
    argv += ["--no-ignore", "--hidden", "--no-config"]
    if ignore_case:
        argv.append("--ignore-case")
    is_dir = host_scope.is_dir()
    if not is_dir and not host_scope.is_file():
        return [], False  # a FIFO or device: nothing to search (and ripgrep would wait on a FIFO)
    if glob and is_dir:
        argv += ["--glob", glob]
    argv += ["--regexp", pattern, "--", "." if is_dir else scope.name]
    # run in the scope: ripgrep matches globs with a slash relative to its working directory
    cwd = scope if is_dir else scope.parent
    done = box.run(argv, cwd=cwd.as_posix())
    if done.timed_out:
        raise ToolError(
            ErrorCode.TIMEOUT,
            f"the search was stopped after {_RG_LIMITS.timeout_s:g} s",
            suggestion="Narrow the scope or the glob, or search for a rarer pattern.",
        )
    if done.exit_code == 2 and not done.stdout and (message := done.stderr.strip().splitlines()):
        # with --no-messages only a bad pattern prints (a file vanishing mid-walk only sets the status)
        raise _bad_pattern(pattern, message[-1])
    found_lines: list[tuple[str, int, str]] = []
    full_paths: dict[str, str] = {}  # tens of thousands of hits share a few thousand paths
    base = str(host_scope if is_dir else host_scope.parent)
    records = done.stdout.split("\n")
    if done.truncated:
        records.pop()  # cut mid-line
    for record in records:
        path, _, rest = record.partition("\0")
        number, _, text = rest.partition(":")
        if not number.isdigit():
            continue
        full = full_paths.get(path)
        if full is None:
            full = full_paths[path] = os.path.normpath(os.path.join(base, path))
        found_lines.append((full, int(number), text))
    found_lines.sort(key=_first_two)
    hits = [Hit(path, number, text.rstrip("\r")) for path, number, text in found_lines[:limit]]
    return hits, len(found_lines) > limit or done.truncated


def _python(pattern: str, scope: Path, glob: str | None, ignore_case: bool) -> Iterator[Hit]:
    flags = re.IGNORECASE if ignore_case else 0
    try:
        regex = re.compile(pattern, flags)
        # a whole-file pre-check skips files without a match; MULTILINE keeps ^ and $ meaning line ends
        anywhere = re.compile(pattern, flags | re.MULTILINE)
    except re.error as exc:
        raise _bad_pattern(pattern, str(exc)) from None
    for path, data in _files(scope, glob):
        if b"\0" in data:  # binary, as ripgrep judges it
            continue
        if not anywhere.search(data.decode("utf-8", errors="replace")):
            continue
        for number, raw in enumerate(data.split(b"\n"), 1):
            text = raw.decode("utf-8", errors="replace")
            if regex.search(text):
                yield Hit(path, number, _line(raw))


def _files(scope: Path, glob: str | None) -> Iterator[tuple[str, bytes]]:
    """(path, content) of regular files below `scope`, walked by fd: a directory swapped for a symlink
    mid-walk (the workspace is shared with sandboxed code) is never followed."""
    if not scope.is_dir():
        data = _read_nofollow(str(scope), None)
        if data is not None:
            yield str(scope), data
        return
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(scope, follow_symlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if glob and not _glob_match(glob, os.path.relpath(path, scope).replace(os.sep, "/")):
                continue
            data = _read_nofollow(name, dir_fd)
            if data is not None:
                yield path, data


def _read_nofollow(name: str, dir_fd: int | None) -> bytes | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None  # a symlink (ELOOP), vanished, or unreadable
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def _glob_match(glob: str, relative: str) -> bool:
    """gitignore-style, as ripgrep's --glob: without a slash the pattern matches the file name at any depth."""
    if glob.startswith("!"):
        return not _glob_match(glob[1:], relative)
    if "/" not in glob.strip("/"):
        return fnmatch.fnmatchcase(relative.rsplit("/", 1)[-1], glob)
    return fnmatch.fnmatchcase(relative, glob.lstrip("/").replace("**/", "*"))


def _line(raw: bytes) -> str:
    return raw.rstrip(b"\r\n").decode("utf-8", errors="replace")


def _bad_pattern(pattern: str, reason: str) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_ARGS,
        f"invalid regular expression {pattern!r}: {reason}",
        suggestion="Escape special characters (e.g. \\( or \\.), or search for a simpler pattern.",
    )
