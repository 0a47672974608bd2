"""The `fs` pack (seed 001 §3.1): ls, read, append, patch, write, mkdir, copy - confined to the roots.

Every path goes through `Roots`: refused with PERMISSION_DENIED and a suggestion when it would leave them.
Writes are atomic (temporary sibling, then rename) or append-only; nothing follows a symlink out of a root.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from tether.exceptions import ToolError
from tether.tools import Toolset, tool
from tether.types import ErrorCode, SandboxPolicy

from ._diff import apply_unified_diff
from ._fsops import FsLimits, copy, list_dir, make_dirs, opened, read_bytes, write_atomic
from ._paths import Roots
from ._registry import PackConfig, ToolPack, register_pack
from ._text import check_text

__all__ = ["FS_PACK", "FsLimits", "LineRange", "fs_pack"]


class LineRange(TypedDict, total=False):
    """Lines to read, 1-indexed and inclusive."""

    start: int
    end: int


def fs_pack(roots: Sequence[str | os.PathLike[str]], *, limits: FsLimits | None = None) -> Toolset:
    """File tools confined to `roots` (the first is where relative paths start)."""
    box = Roots(roots)
    caps = limits or FsLimits()
    policy = SandboxPolicy(filesystem=tuple(f"{root}/**" for root in box.paths))

    @tool(
        name="fs.ls",
        category="fs",
        side_effects="none",
        requires_why=True,
        sandbox=policy,
        examples=[{"input": {"path": "docs"}, "why": "See which design notes exist before reading one"}],
    )
    def ls(path: str = ".") -> list[dict[str, Any]]:
        """List a directory: name, type (file, directory, symlink), size in bytes and modified time.

        Args:
            path: Directory to list, relative to the workspace root.
        """
        with opened(box, box.locate(path), os.O_RDONLY | os.O_DIRECTORY, shown=path) as fd:
            entries, more = list_dir(fd, caps.list_entries)
        if more:
            entries.append({"name": f"... more than {caps.list_entries} entries", "type": "truncated"})
        return entries

    @tool(
        name="fs.read",
        category="fs",
        side_effects="none",
        requires_why=True,
        sandbox=policy,
        examples=[
            {"input": {"path": "src/parser.ts", "range": {"start": 1, "end": 40}}, "why": "Check the parser"}
        ],
    )
    def read(path: str, range: LineRange | None = None) -> dict[str, Any]:
        """Read a text file, or some of its lines.

        Args:
            path: File to read, relative to the workspace root.
            range: Lines to return, 1-indexed and inclusive, e.g. {"start": 10, "end": 20}.
        """
        with opened(box, box.locate(path), os.O_RDONLY, shown=path) as fd:
            data, truncated = read_bytes(fd, caps.read_bytes)
        if b"\x00" in data[:8192]:
            raise ToolError(
                ErrorCode.INVALID_ARGS, f"{path!r} is a binary file", suggestion="Read text files only."
            )
        text = data.decode("utf-8", errors="replace")
        lines = text.splitlines(keepends=True)
        if range:
            start = max(1, range.get("start", 1))
            end = range.get("end", len(lines))
            text = "".join(lines[start - 1 : max(start - 1, end)])
        return {"content": text, "lines": len(lines), "truncated": truncated}

    @tool(
        name="fs.append",
        category="fs",
        side_effects="mutating",
        requires_why=True,
        sandbox=policy,
        examples=[{"input": {"path": "log.md", "text": "- ran tests\n"}, "why": "Record the test run"}],
    )
    def append(path: str, text: str) -> dict[str, Any]:
        """Append text to a file, creating it if missing.

        Args:
            path: File to append to.
            text: Text to add at the end, verbatim (include the newline you want).
        """
        data = _checked(text, caps, "text")
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        with opened(box, box.locate(path), flags, 0o644, shown=path) as fd:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ToolError(
                    ErrorCode.INVALID_ARGS, f"{path!r} is not a regular file", suggestion="Use fs.ls."
                )
            os.write(fd, data)
        return {"path": path, "bytes_written": len(data)}

    @tool(
        name="fs.patch",
        category="fs",
        side_effects="mutating",
        requires_why=True,
        sandbox=policy,
        examples=[
            {
                "input": {"path": "a.txt", "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"},
                "why": "Fix the typo the review found",
            }
        ],
    )
    def patch(path: str, diff: str) -> dict[str, Any]:
        """Apply a unified diff to a file; every hunk's context must match the file.

        Args:
            path: File to patch.
            diff: Unified diff, as `diff -u` or `git diff` print it.
        """
        check_text(diff, "diff")
        located = box.locate(path)
        with opened(box, located, os.O_RDONLY, shown=path) as fd:
            data, truncated = read_bytes(fd, caps.write_bytes)
        if truncated:
            raise ToolError(
                ErrorCode.QUOTA_EXCEEDED, f"{path!r} is too large to patch", suggestion="Use fs.write."
            )
        patched, hunks = apply_unified_diff(data.decode("utf-8", errors="replace"), diff)
        write_atomic(box, located, _checked(patched, caps, "the patched file"), shown=path)
        return {"path": path, "hunks_applied": hunks}

    @tool(
        name="fs.write",
        category="fs",
        side_effects="idempotent",
        requires_why=True,
        sandbox=policy,
        examples=[{"input": {"path": "notes/plan.md", "content": "# Plan\n"}, "why": "Start the plan file"}],
    )
    def write(path: str, content: str) -> dict[str, Any]:
        """Write or overwrite a whole file (prefer fs.append or fs.patch when possible).

        Args:
            path: File to write; its directory must exist (see fs.mkdir).
            content: The file's entire new content.
        """
        data = _checked(content, caps, "content")
        write_atomic(box, box.locate(path), data, shown=path)
        return {"path": path, "bytes_written": len(data)}

    @tool(
        name="fs.mkdir",
        category="fs",
        side_effects="idempotent",
        requires_why=True,
        sandbox=policy,
        examples=[{"input": {"path": "notes/2024"}, "why": "Make room for this year's notes"}],
    )
    def mkdir(path: str) -> dict[str, Any]:
        """Create a directory and any missing parents.

        Args:
            path: Directory to create.
        """
        created = make_dirs(box, box.locate(path), shown=path)
        return {"path": path, "created": created}

    @tool(
        name="fs.copy",
        category="fs",
        side_effects="idempotent",
        requires_why=True,
        sandbox=policy,
        examples=[
            {"input": {"src": "draft.md", "dst": "backup/draft.md"}, "why": "Keep the draft before editing"}
        ],
    )
    def copy_(src: str, dst: str) -> dict[str, Any]:
        """Copy a file or a directory tree (symlinks are copied as links).

        Args:
            src: File or directory to copy.
            dst: Where the copy goes; a file's directory must exist.
        """
        located = box.locate(src, what="src"), box.locate(dst, what="dst")
        files, size = copy(box, located[0], located[1], caps.copy_bytes, shown=(src, dst))
        return {"src": src, "dst": dst, "files": files, "bytes": size}

    return Toolset(ls, read, append, patch, write, mkdir, copy_)


def _checked(text: str, caps: FsLimits, what: str) -> bytes:
    check_text(text, what)
    data = text.encode("utf-8")
    if len(data) > caps.write_bytes:
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"content is {len(data)} bytes; the limit is {caps.write_bytes}",
            suggestion="Write the file in parts with fs.append.",
        )
    return data


def _build(config: PackConfig) -> Toolset:
    roots: list[Path] = list(config.roots)
    if not roots:
        roots = [config.exec_workspace]
    return fs_pack(roots, limits=config.options.get("fs_limits"))


FS_PACK = register_pack(
    ToolPack("fs", _build, "Files: ls, read, append, patch, write, mkdir, copy (seed 001)")
)
