"""`Dialect`: a tool-call format, as the registry holds it: how to teach it, read it, and feed results back."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from tether.dialects._parser import StreamParser
from tether.dialects._tools import ToolIndex
from tether.exceptions import UserError
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Dialect", "render_envelope"]


class Dialect(ABC):
    """A tool-call format: how to teach it, how to read it, how to feed results back."""

    name: ClassVar[str]
    """The name `parse(..., dialect=name)` uses."""
    description: ClassVar[str] = ""

    parser: ClassVar[type[StreamParser]]
    """The parser class that reads this format: what a dialect declares instead of writing `stream_parser`."""

    def stream_parser(self, tools: ToolIndex) -> StreamParser:
        """A fresh incremental parser for one model output (override only when `parser` cannot say how).

        Raises:
            UserError: The dialect declares no `parser` (and does not override this method).
        """
        try:
            parser = self.parser
        except AttributeError:
            raise UserError(
                f"the {self.name!r} dialect declares no parser: set `parser = YourParser` (a StreamParser "
                "subclass, e.g. a RegionParser with openers) on the class, or override stream_parser()"
            ) from None
        return parser(self.name, tools)

    @abstractmethod
    def render_tools(self, tools: ToolIndex) -> str:
        """The system-prompt text that teaches a model this format for these tools."""

    @abstractmethod
    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """The calls as a model writes them in this format (native dialects: the provider's JSON message), so
        that `parse` reads them back; empty for no calls."""

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        """Tool results as the text fed back to the model (default: one tagged JSON envelope per result)."""
        return "\n".join(
            f'<tool_response name="{r.name}" id="{r.call_id}">\n{render_envelope(r)}\n</tool_response>'
            for r in results
        )


def render_envelope(result: ToolResultMessage) -> str:
    """The result's envelope as compact JSON."""
    return result.envelope.model_dump_json(exclude_none=True)
