"""The entry points: `parse`, `stream_parser`, `render_tools`, `render_results`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether.dialects._dialect import Dialect
from tether.dialects._events import ParseResult
from tether.dialects._parser import StreamParser
from tether.dialects._registry import get_dialect
from tether.dialects._tools import ToolIndex
from tether.exceptions import UserError
from tether.types import ToolResultMessage

__all__ = ["parse", "render_results", "render_tools", "stream_parser"]


def stream_parser(
    dialect: str | Dialect = "hermes", tools: Any = None, *, reasoning_open: bool = False
) -> StreamParser:
    """A fresh incremental parser: `feed(delta)` text as it arrives, then `close()`; `.result` at any time.

    Args:
        dialect: A registered dialect name (see `dialect_names()`), `"auto"`, or a `Dialect`.
        tools: None, a Toolset, ToolSpecs, or tool dicts in any format tether reads; used for positional
            arguments and for typing values that a format carries as text.
        reasoning_open: The chat template already opened the reasoning block (e.g. the prompt ends with
            `<think>`), so the output begins inside it and shows only its end: text up to the end marker is
            reasoning, and calls written there are not calls.

    Raises:
        UserError: `reasoning_open` for a dialect with no reasoning block.
    """
    parser = get_dialect(dialect).stream_parser(ToolIndex.of(tools))
    if reasoning_open:
        parser.open_reasoning()
    return parser


def parse(
    text: str, dialect: str | Dialect = "hermes", tools: Any = None, *, reasoning_open: bool = False
) -> ParseResult:
    """Read the tool calls, content and reasoning out of one complete model output. Never raises on `text`.

    Equal to feeding `text` to `stream_parser(dialect, tools, reasoning_open=...)` in any pieces and closing it.
    """
    p = stream_parser(dialect, tools, reasoning_open=reasoning_open)
    p.feed(text)
    p.close()
    return p.result


def render_tools(dialect: str | Dialect, tools: Any) -> str:
    """The system-prompt text that teaches a model `dialect` for these tools.

    Raises:
        UserError: The dialect's `render_tools` gives no text (e.g. a dialect of one's own still a stub), which
            would leave the model untold of its tools.
    """
    found = get_dialect(dialect)
    prompt: object = found.render_tools(ToolIndex.of(tools))
    if type(prompt) is not str:
        raise UserError(
            f"the {found.name} dialect's render_tools() returned {prompt!r}, not the text that teaches a model "
            "the tools (their names, what they take, how to write a call)."
        )
    return prompt


def render_results(dialect: str | Dialect, results: Sequence[ToolResultMessage]) -> str:
    """Tool results in the text form `dialect` feeds back to the model."""
    return get_dialect(dialect).render_results(results)
