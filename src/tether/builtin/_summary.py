"""memory.summarize's default summariser: extractive, deterministic, no model needed.

`bullet` keeps headings and each paragraph's first sentence; `narrative` the opening paragraph; `schema` the
outline (headings, top-level definitions, keys). An application can pass its own (e.g. model-backed) one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["Summarizer", "extractive_summary"]

Summarizer = Callable[[str, str, str], str]
"""(path, text, style) -> summary text."""

_HEADING = re.compile(r"^(#{1,6})\s+(.*)")
_DEFINITION = re.compile(r"^(?:async\s+def|def|class|function|export\s+\w+|interface|type)\s+\w+")
_KEY = re.compile(r"^([A-Za-z_][\w.-]*):(\s|$)")
_SENTENCE = re.compile(r"(.+?[.!?])(\s|$)")
_MAX_ITEMS = 12


def extractive_summary(path: str, text: str, style: str) -> str:
    lines = text.splitlines()
    if style == "schema":
        outline = [
            line.rstrip()
            for line in lines
            if _HEADING.match(line) or _DEFINITION.match(line) or _KEY.match(line)
        ]
        return (
            "\n".join(f"- {item.strip()}" for item in outline[: _MAX_ITEMS * 2]) or "- (no structure found)"
        )
    paragraphs = _paragraphs(lines)
    if style == "narrative":
        return paragraphs[0] if paragraphs else "(empty)"
    items: list[str] = []
    for paragraph in paragraphs:
        heading = _HEADING.match(paragraph)
        if heading:
            items.append(f"**{heading.group(2).strip()}**")
            continue
        first = _SENTENCE.match(paragraph)
        items.append(first.group(1) if first else paragraph[:200])
    return "\n".join(f"- {item}" for item in items[:_MAX_ITEMS]) or "- (empty)"


def _paragraphs(lines: list[str]) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for line in lines:
        if _HEADING.match(line):
            if current:
                out.append(" ".join(current))
                current = []
            out.append(line.strip())
        elif line.strip():
            current.append(line.strip())
        elif current:
            out.append(" ".join(current))
            current = []
    if current:
        out.append(" ".join(current))
    return out
