"""`auto`: detect the format among the text dialects, committing as early as it safely can.

Every candidate dialect parses the output side by side (linear, a constant factor slower). `auto` commits to
the candidate whose first complete call begins earliest (ties go to the more specific format) as soon as no
other candidate still holds undecided text that begins at or before it; from then on it is that dialect.
Until it commits, its events are held back. Output with no call at all is read as plain text (with
`<think>` reasoning).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._base import Dialect, StreamParser
from tether.dialects._events import ParseEvent, ParseResult, PartialCall
from tether.dialects._registry import get_dialect
from tether.dialects._tools import ToolIndex
from tether.types import ToolResultMessage

__all__ = ["CANDIDATES", "Auto"]

CANDIDATES = (
    "hermes",
    "qwen3_coder_xml",
    "glm45",
    "mistral",
    "kimi_k2",
    "deepseek_v31",
    "gemma4",
    "harmony",
    "olmo3_pythonic",
    "lfm2",
    "seed_oss",
    "deepseek_v32",
    "deepseek_v4",
    "step3",
    "minicpm5_xml",
    "apertus",
    "internlm2",
    "longcat",
    "granite",
    "granite_20b_fc",
    "minimax",
    "hunyuan_a13b",
    "json_calls",
    "fenced",
    "yaml",
    "llama3_json",
    "xlam",
    "pythonic",
    "gigachat3",
)
"""Text dialects `auto` chooses among, most specific first (ties go to the earlier)."""


class AutoParser(StreamParser):
    """Runs the candidates side by side until one can be chosen."""

    def __init__(self, tools: ToolIndex, candidates: Sequence[str] = CANDIDATES):
        super().__init__("auto", tools)
        self._candidates = [get_dialect(name).stream_parser(tools) for name in candidates]
        self._held: list[list[ParseEvent]] = [[] for _ in self._candidates]
        self._chosen: StreamParser | None = None

    @property
    def chosen(self) -> str | None:
        """The dialect committed to, once known."""
        return self._chosen.dialect if self._chosen else None

    def _feed(self, delta: str, start: int) -> None:
        if self._chosen is not None:
            self._events.extend(self._chosen.feed(delta))
            return
        for held, p in zip(self._held, self._candidates, strict=True):
            held.extend(p.feed(delta))
        self._decide(final=False)

    def _close(self) -> None:
        if self._chosen is not None:
            self._events.extend(self._chosen.close())
            return
        for held, p in zip(self._held, self._candidates, strict=True):
            held.extend(p.close())
        self._decide(final=True)

    def _decide(self, *, final: bool) -> None:
        best: int | None = None
        best_at = 0
        for n, p in enumerate(self._candidates):
            at = p.first_call_at
            if at is not None and (best is None or at < best_at):
                best, best_at = n, at
        if best is None:
            if not final:
                return
            with_reasoning = [n for n, p in enumerate(self._candidates) if p.result.reasoning is not None]
            best = with_reasoning[0] if with_reasoning else 0
        elif not final:
            for p in self._candidates:
                since = p.busy_since
                if since is not None and since <= best_at and p.first_call_at is None:
                    return  # another format may still read a call that begins earlier
        self._chosen = self._candidates[best]
        self._events.extend(self._held[best])
        self._held = []
        self._candidates = []

    @property
    def result(self) -> ParseResult:
        if self._chosen is not None:
            return self._chosen.result
        return super().result

    def partial_calls(self) -> list[PartialCall]:
        return self._chosen.partial_calls() if self._chosen else []


class Auto(Dialect):
    """Detects the format (see the module docstring)."""

    name: ClassVar[str] = "auto"

    def stream_parser(self, tools: ToolIndex) -> AutoParser:
        return AutoParser(tools)

    def render_tools(self, tools: ToolIndex) -> str:
        return get_dialect("hermes").render_tools(tools)

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return get_dialect("hermes").render_results(results)
