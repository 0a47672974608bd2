"""Apply a unified diff to text, strictly: every hunk's context must match, near where the diff says."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tether.exceptions import ToolError
from tether.types import ErrorCode

__all__ = ["apply_unified_diff"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_REGENERATE = "Read the file again with fs.read and make the diff against its current content."


@dataclass
class _Hunk:
    old_start: int
    header: str
    old: list[str] = field(default_factory=list[str])
    new: list[str] = field(default_factory=list[str])


def apply_unified_diff(text: str, diff: str) -> tuple[str, int]:
    """The patched text and the number of hunks applied.

    Raises:
        ToolError: INVALID_ARGS for a diff without hunks; CONFLICT naming the first hunk that does not apply.
    """
    hunks = _parse(diff)
    lines = text.split("\n") if text else []
    trailing_newline = text.endswith("\n") or not text
    if text and trailing_newline:
        lines.pop()
    offset = 0
    for number, hunk in enumerate(hunks, 1):
        at = _find(lines, hunk.old, hunk.old_start - 1 + offset)
        if at is None:
            expected = "\n".join(hunk.old[:3])
            raise ToolError(
                ErrorCode.CONFLICT,
                f"hunk {number} ({hunk.header}) does not apply: its context was not found; expected:\n{expected}",
                suggestion=_REGENERATE,
            )
        lines[at : at + len(hunk.old)] = hunk.new
        offset = at - (hunk.old_start - 1) + len(hunk.new) - len(hunk.old)
    out = "\n".join(lines)
    return (out + "\n" if trailing_newline and lines else out), len(hunks)


def _parse(diff: str) -> list[_Hunk]:
    hunks: list[_Hunk] = []
    current: _Hunk | None = None
    for line in diff.replace("\r\n", "\n").split("\n"):
        match = _HUNK.match(line)
        if match:
            current = _Hunk(old_start=int(match.group(1)), header=line.split(" @@")[0] + " @@")
            if match.group(2) == "0":  # pure insertion: lines go *after* old_start
                current.old_start += 1
            hunks.append(current)
        elif current is None or line.startswith(("---", "+++", "\\")):
            continue
        elif line.startswith(" ") or line == "":
            current.old.append(line[1:])
            current.new.append(line[1:])
        elif line.startswith("-"):
            current.old.append(line[1:])
        elif line.startswith("+"):
            current.new.append(line[1:])
    for hunk in hunks:  # a diff ends with "\n", which splits into one empty line that is not context
        while hunk.old and hunk.new and hunk.old[-1] == "" and hunk.new[-1] == "":
            hunk.old.pop()
            hunk.new.pop()
    if not hunks:
        raise ToolError(
            ErrorCode.INVALID_ARGS,
            "the diff has no hunks (lines starting with '@@ -a,b +c,d @@')",
            suggestion="Send a unified diff, as `diff -u` or `git diff` print it.",
        )
    return hunks


def _find(lines: list[str], old: list[str], expected: int) -> int | None:
    """The start nearest `expected` where `old` matches exactly, else ignoring trailing whitespace."""
    if not old:
        return max(0, min(expected, len(lines)))
    for loose in (False, True):
        want = [line.rstrip() for line in old] if loose else old
        have = [line.rstrip() for line in lines] if loose else lines
        candidates = [i for i in range(len(have) - len(want) + 1) if have[i : i + len(want)] == want]
        if candidates:
            return min(candidates, key=lambda i: abs(i - expected))
    return None
