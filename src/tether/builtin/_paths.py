"""Path containment for file tools: a model's path either names something inside the configured roots, or
the call is refused with PERMISSION_DENIED and a suggestion.

Seed 000 sanitises paths by deleting `..` from the string, which `....//` defeats (it becomes `../`). Here a
path is never rewritten; it is checked, then resolved by the kernel:

1. As text: a path with no UTF-8 form (a lone surrogate, which JSON's `\ud800` escapes can carry) or longer
   than the kernel takes (a name over 255 bytes, a path over 4095) is refused with INVALID_ARGS: no file
   can have that name, so there is nothing to deny.
2. Lexically: NUL and control characters, invisible format characters (bidi overrides, zero-width),
   backslashes, `~`, and any component made only of dots (`..`, `...`, `....`) are refused. So is a path that
   percent-decoding or Unicode NFKC normalisation would turn into one of those (`%2e%2e%2f`, fullwidth
   U+FF0E U+FF0E U+FF0F, the two-dot leader U+2025): some layer between the model and the disk may decode it.
3. Absolute paths are accepted only inside a root; relative paths are relative to the first root.
4. Opening goes through `openat2(RESOLVE_BENEATH)` from the root's directory fd, so symlinks that leave the
   root - including ones created mid-operation - fail in the kernel, atomically.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from tether.exceptions import ToolError, UserError
from tether.types import ErrorCode

from ._openat import open_beneath
from ._text import SURROGATE_HINT, surrogate_problem

__all__ = ["Located", "Roots"]

_NAME_MAX = 255
"""The longest file name in bytes (NAME_MAX on Linux file systems)."""
_PATH_MAX = 4095
"""The longest path in bytes the kernel takes (PATH_MAX, 4096, counts the terminating NUL)."""
_DOTS = re.compile(r"^\.{2,}$")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SLASH_LOOKALIKES = frozenset("\u2215\u2044\u29f8\ufe68\uff0f\uff3c\u2571\u2572\u29f5\u29f9")


@dataclass(frozen=True, slots=True)
class Located:
    """A checked path: the root it lies in and the path relative to that root (`""` for the root itself)."""

    root: Path
    relative: str

    @property
    def path(self) -> Path:
        """The lexical host path (symlinks not resolved; open through `Roots.open`, never this)."""
        return self.root / self.relative if self.relative else self.root


class Roots:
    """The directories file tools may use; the first is where relative paths start.

    Args:
        roots: existing directories; at least one.
    """

    def __init__(self, roots: Sequence[str | os.PathLike[str]]) -> None:
        if not roots:
            raise UserError("Roots needs at least one directory, e.g. Roots(['./workspace']).")
        resolved: list[Path] = []
        for root in roots:
            path = Path(root).resolve()
            if not path.is_dir():
                raise UserError(
                    f"root {str(root)!r} is not a directory; create it or configure another root."
                )
            resolved.append(path)
        self.paths: tuple[Path, ...] = tuple(resolved)

    @property
    def default(self) -> Path:
        return self.paths[0]

    def locate(self, user_path: object, *, what: str = "path") -> Located:
        """Check `user_path` lexically and say which root it is in.

        Raises:
            ToolError: PERMISSION_DENIED, or INVALID_ARGS for a non-string, text with no UTF-8 form or a
                path too long for the kernel; with a suggestion.
        """
        if not isinstance(user_path, str):
            raise ToolError(ErrorCode.INVALID_ARGS, f"{what} must be a string", suggestion=self._hint())
        _check_encodable(user_path, what)
        _check_text(user_path, what, self._hint())
        if user_path.startswith("/"):
            candidate = Path(os.path.normpath(user_path))
            for root in self.paths:
                if candidate == root or candidate.is_relative_to(root):
                    rel = candidate.relative_to(root).as_posix()
                    return Located(root, "" if rel == "." else rel)
            raise self.denied(user_path, "is outside the allowed roots")
        rel = "/".join(p for p in user_path.split("/") if p not in ("", "."))
        return Located(self.default, rel)

    def open(self, user_path: object, flags: int, mode: int = 0o666, *, what: str = "path") -> int:
        """Open a model-given path beneath its root; returns an fd the caller must close.

        Raises:
            ToolError: PERMISSION_DENIED for escapes (symlinks out included), NOT_FOUND, INVALID_ARGS.
        """
        located = self.locate(user_path, what=what)
        return self.open_located(located, flags, mode, shown=str(user_path))

    def open_located(self, located: Located, flags: int, mode: int = 0o666, *, shown: str) -> int:
        root_fd = os.open(located.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            # O_NONBLOCK: a FIFO planted in the workspace must not hang the tool (no effect on regular files)
            extra = 0 if flags & os.O_PATH else os.O_NONBLOCK  # openat2 refuses O_PATH with other flags
            return open_beneath(root_fd, located.relative, flags | extra, mode)
        except OSError as exc:
            raise self.os_error(exc, shown) from None
        finally:
            os.close(root_fd)

    def resolve(self, user_path: object, *, what: str = "path") -> Path:
        """The real path of an existing file or directory inside the roots (for tools that need a path).

        Raises:
            ToolError: as `open`.
        """
        return self.resolve_located(self.locate(user_path, what=what), shown=str(user_path))

    def resolve_located(self, located: Located, *, shown: str) -> Path:
        fd = self.open_located(located, os.O_PATH, shown=shown)
        try:
            real = Path(os.readlink(f"/proc/self/fd/{fd}"))
        finally:
            os.close(fd)
        if not any(real == root or real.is_relative_to(root) for root in self.paths):  # belt and braces
            raise self.denied(shown, "resolves outside the allowed roots")
        return real

    def within(self, real: Path) -> Located:
        """The `Located` of a real path known to be inside a root."""
        root = next(r for r in self.paths if real == r or real.is_relative_to(r))
        rel = real.relative_to(root).as_posix()
        return Located(root, "" if rel == "." else rel)

    def display(self, path: Path) -> str:
        """How a host path inside the roots is shown to the model: relative to the first root or absolute."""
        if path == self.default:
            return "."
        if path.is_relative_to(self.default):
            return path.relative_to(self.default).as_posix()
        return path.as_posix()

    def denied(self, user_path: str, reason: str) -> ToolError:
        return ToolError(
            ErrorCode.PERMISSION_DENIED,
            f"{_show(user_path)} {reason}",
            recoverable=True,
            suggestion=self._hint(),
        )

    def os_error(self, exc: OSError, user_path: str) -> ToolError:
        shown = _show(user_path)
        if exc.errno in (errno.EXDEV, errno.ELOOP):
            return self.denied(user_path, "leaves the allowed roots (through `..` or a symlink)")
        if exc.errno in (errno.EACCES, errno.EPERM):
            return ToolError(
                ErrorCode.PERMISSION_DENIED, f"{shown}: permission denied", suggestion=self._hint()
            )
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return ToolError(
                ErrorCode.NOT_FOUND,
                f"no such file or directory: {shown}",
                suggestion="List the parent directory with fs.ls to see what exists.",
            )
        if exc.errno == errno.EISDIR:
            return ToolError(
                ErrorCode.INVALID_ARGS, f"{shown} is a directory", suggestion="Use fs.ls for directories."
            )
        if exc.errno == errno.ENXIO:
            return ToolError(
                ErrorCode.INVALID_ARGS, f"{shown} is not a regular file", suggestion="Use fs.ls."
            )
        if exc.errno == errno.ENAMETOOLONG:
            return _too_long(shown)
        if exc.errno == errno.EEXIST:
            return ToolError(ErrorCode.CONFLICT, f"{shown} already exists")
        return ToolError(ErrorCode.INTERNAL, f"{shown}: {exc.strerror}", recoverable=False)

    def _hint(self) -> str:
        others = ", ".join(str(p) for p in self.paths[1:])
        extra = f" (or absolute paths inside {others})" if others else ""
        return f"Use a path relative to the workspace root without '..', e.g. 'notes/todo.md'{extra}."


def is_dir(fd: int) -> bool:
    return stat.S_ISDIR(os.fstat(fd).st_mode)


def _check_encodable(path: str, what: str) -> None:
    if (problem := surrogate_problem(path)) is not None:
        raise ToolError(
            ErrorCode.INVALID_ARGS,
            f"{what} {_show(path)} {problem}, so no file can have this name",
            suggestion=f"{SURROGATE_HINT} A name fs.ls shows with \ufffd cannot be named; rename it first.",
        )
    size = len(path.encode())
    if size > _PATH_MAX or any(len(part.encode()) > _NAME_MAX for part in path.split("/")):
        raise _too_long(f"{what} {_show(path)}")


def _too_long(shown: str) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_ARGS,
        f"{shown} is longer than the file system allows (a name at most {_NAME_MAX} bytes, a path "
        f"{_PATH_MAX})",
        suggestion="Use a shorter file name, or fewer nested directories.",
    )


def _check_text(path: str, what: str, hint: str) -> None:
    reason = _lexical_problem(path)
    if reason is not None:
        raise ToolError(ErrorCode.PERMISSION_DENIED, f"{what} {_show(path)} {reason}", suggestion=hint)


def _lexical_problem(path: str) -> str | None:
    if path.startswith("~"):
        return "starts with '~'; home directories are not reachable"
    if _URL.match(path):
        return "is a URL, not a path"
    decoded = _decode(path)
    if "\ufffd" in decoded and "\ufffd" not in path:
        return "contains invalid percent-encoding"
    for variant, how in ((path, ""), (decoded, " once percent-decoded"), (_nfkc(path), " once normalised")):
        if any(ch == "\x00" for ch in variant):
            return f"contains a NUL byte{how}"
        if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in variant):
            return f"contains control or invisible characters{how}"
        if "\\" in variant or any(ch in _SLASH_LOOKALIKES for ch in variant):
            return f"contains a backslash or a look-alike slash{how}"
        if any(_DOTS.match(part) for part in variant.split("/")):
            return f"contains a '..' (or all-dots) component{how}"
        if how and variant.startswith("/") and not path.startswith("/"):
            return f"becomes absolute{how}"
    return None


def _decode(path: str) -> str:
    for _ in range(4):  # %252e%252e -> %2e%2e -> ..
        decoded = unquote(path, errors="replace") if "%" in path else path
        if decoded == path:
            break
        path = decoded
    return path


def _nfkc(path: str) -> str:
    return unicodedata.normalize("NFKC", path)


def _show(path: str) -> str:
    text = path if len(path) <= 200 else path[:200] + "..."
    return repr(text)
