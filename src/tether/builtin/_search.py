"""The engine of search.lexical: ripgrep when installed, a pure-Python walk otherwise, same results.

Both search every regular file below the scope (hidden ones too, ignore files ignored), never follow
symlinks, skip binary files (a NUL byte), and report one hit per matching line, sorted by path and line.
ripgrep only finds the hits; context lines are read the same way for both.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tether.exceptions import ToolError
from tether.types import ErrorCode

__all__ = ["Hit", "find_hits", "ripgrep"]


@dataclass(frozen=True, order=True, slots=True)
class Hit:
    path: str
    """The real path, as a string (sorting thousands of `Path`s is slow)."""
    line: int
    text: str


def ripgrep() -> str | None:
    return shutil.which("rg")


def find_hits(
    pattern: str, scope: Path, *, glob: str | None, ignore_case: bool, limit: int, engine: str | None = None
) -> tuple[list[Hit], bool]:
    """Matching lines below `scope` (a real path inside the roots), sorted; and whether there were more."""
    rg = ripgrep() if engine in (None, "rg") else None
    if engine == "rg" and rg is None:
        raise ToolError(ErrorCode.INTERNAL, "ripgrep is not installed", recoverable=False)
    if rg:
        return _rg(rg, pattern, scope, glob, ignore_case, limit)
    hits = sorted(_python(pattern, scope, glob, ignore_case), key=_order)
    return hits[:limit], len(hits) > limit


def _order(hit: Hit) -> tuple[str, int]:
    return hit.path, hit.line


def _first_two(item: tuple[str, int, bytes]) -> tuple[str, int]:
    return item[0], item[1]


def _rg(
    rg: str, pattern: str, scope: Path, glob: str | None, ignore_case: bool, limit: int
) -> tuple[list[Hit], bool]:
    argv = [
        rg,
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
    is_dir = scope.is_dir()
    if glob and is_dir:
        argv += ["--glob", glob]
    argv += ["--regexp", pattern, "--", "." if is_dir else str(scope)]
    # run in the scope: ripgrep matches globs with a slash relative to its working directory
    cwd = scope if is_dir else None
    done = subprocess.run(
        argv, capture_output=True, check=False, cwd=cwd, env={"PATH": os.environ.get("PATH", "")}
    )
    if done.returncode == 2 and not done.stdout:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise _bad_pattern(pattern, message[-1] if message else "ripgrep failed")
    found_lines: list[tuple[str, int, bytes]] = []
    full_paths: dict[bytes, str] = {}  # tens of thousands of hits share a few thousand paths
    base = str(scope)
    for record in done.stdout.split(b"\n"):
        if not record:
            continue
        path, _, rest = record.partition(b"\0")
        number, _, text = rest.partition(b":")
        full = full_paths.get(path)
        if full is None:
            found = os.fsdecode(path)
            full = full_paths[path] = os.path.normpath(os.path.join(base, found)) if is_dir else found
        found_lines.append((full, int(number), text))
    found_lines.sort(key=_first_two)  # decode only what is returned
    hits = [Hit(path, number, _line(text)) for path, number, text in found_lines[:limit]]
    return hits, len(found_lines) > limit


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
