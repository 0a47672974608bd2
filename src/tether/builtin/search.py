"""The `search` pack (seed 001 §3.2): search.lexical, regex search confined to the roots.

ripgrep does the finding when it is installed; otherwise a pure-Python walk gives the same results.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tether.exceptions import ToolError
from tether.tools import Toolset, tool
from tether.types import ErrorCode, SandboxPolicy

from ._paths import Roots
from ._registry import PackConfig, ToolPack, register_pack
from ._search import DEADLINE_S, Hit, find_hits
from ._text import check_text

__all__ = ["SEARCH_PACK", "search_pack"]

_MAX_LINE = 500
_MAX_RESULTS = 1000
_MAX_CONTEXT = 10
_MAX_FILE = 64 * 1024 * 1024


def search_pack(roots: Sequence[str | os.PathLike[str]], *, engine: str | None = None) -> Toolset:
    """Search tools confined to `roots`.

    Args:
        roots: Directories that may be searched; the first is where relative scopes start.
        engine: `"rg"` or `"python"` to force one; by default ripgrep when installed.
    """
    box = Roots(roots)

    @tool(
        name="search.lexical",
        category="search",
        side_effects="none",
        requires_why=True,
        sandbox=SandboxPolicy(
            filesystem=tuple(f"{root}/**" for root in box.paths), timeout_ms=int(DEADLINE_S * 1000) + 5000
        ),
        examples=[
            {
                "input": {"query": "YAML Jazz", "scope": "docs", "glob": "*.md", "context": 1},
                "why": "Find where YAML Jazz is defined to understand its principles",
            }
        ],
    )
    def lexical(
        query: str,
        scope: str = ".",
        glob: str | None = None,
        context: int = 0,
        ignore_case: bool = False,
        max_results: int = 100,
    ) -> list[dict[str, Any]]:
        """Full-text search with regular expressions; one result per matching line.

        Args:
            query: Search pattern (a regular expression; escape special characters for a literal search).
            scope: Directory (or file) to search in, relative to the workspace root.
            glob: File pattern, e.g. "*.md" (any depth) or "src/**/*.py".
            context: Lines of context to return before and after each match (at most 10).
            ignore_case: Match letters case-insensitively.
            max_results: The most results to return (at most 1000).
        """
        if not query:
            raise ToolError(ErrorCode.INVALID_ARGS, "query must not be empty", suggestion='e.g. "def parse"')
        _check_pattern(query, "query")
        if glob is not None:
            _check_pattern(glob, "glob")
        where = box.resolve(scope, what="scope")
        limit = max(1, min(max_results, _MAX_RESULTS))
        root = box.within(where).root
        hits, _ = find_hits(
            query, where, root=root, glob=glob, ignore_case=ignore_case, limit=limit, engine=engine
        )
        around = max(0, min(context, _MAX_CONTEXT))
        return _results(box, hits, around)

    return Toolset(lexical)


def _check_pattern(text: str, what: str) -> None:
    """A pattern ripgrep (a program: no NUL in its arguments) and the Python engine both take."""
    check_text(text, what)
    if "\x00" in text:
        raise ToolError(
            ErrorCode.INVALID_ARGS,
            f"{what} holds a NUL byte, which cannot be passed to the search",
            suggestion="Match a NUL byte with the regular expression escape \\x00.",
        )


def _results(box: Roots, hits: list[Hit], around: int) -> list[dict[str, Any]]:
    """Shape the hits, reading every returned line again through the roots (openat2 beneath them).

    ripgrep runs as tether's user and walks paths; a sandboxed program sharing the workspace could swap a
    directory for a symlink while it walks. Only lines that the contained read confirms are returned.
    """
    results: list[dict[str, Any]] = []
    files: dict[str, list[bytes] | None] = {}
    for hit in hits:
        if hit.path not in files:
            files[hit.path] = _lines(box, hit.path)
        lines = files[hit.path]
        if lines is None or hit.line > len(lines) or _text(lines[hit.line - 1]) != hit.text:
            continue
        item: dict[str, Any] = {
            "path": box.display(Path(hit.path)),
            "line": hit.line,
            "content": hit.text[:_MAX_LINE],
        }
        start, end = max(0, hit.line - 1 - around), min(len(lines), hit.line + around)
        item["context"] = [_text(raw)[:_MAX_LINE] for raw in lines[start:end]] if around else []
        results.append(item)
    return results


def _lines(box: Roots, path: str) -> list[bytes] | None:
    try:
        fd = box.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except ToolError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(_MAX_FILE).split(b"\n")


def _text(raw: bytes) -> str:
    return raw.rstrip(b"\r").decode("utf-8", errors="replace")


def _build(config: PackConfig) -> Toolset:
    roots: list[Path] = list(config.roots) or [config.exec_workspace]
    return search_pack(roots, engine=config.options.get("search_engine"))


SEARCH_PACK = register_pack(
    ToolPack("search", _build, "Search: search.lexical (regex, scope, glob, context)")
)
