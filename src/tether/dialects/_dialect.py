"""`Dialect`: a tool-call format, as the registry holds it: how to teach it, read it, and feed results back."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

from tether._model_events import ModelChunk
from tether.dialects._native import NativeParser
from tether.dialects._parser import StreamParser
from tether.dialects._regions import Opener, region_parser
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.exceptions import UserError
from tether.types import ToolCall, ToolResultMessage

__all__ = ["Dialect"]

_CHECKED: dict[int, tuple[Opener, ...]] = {}
"""Opener tuples `Dialect.stream_parser` found valid, by identity (a dialect's are a class attribute)."""


class Dialect(ABC):
    """A tool-call format: how to teach it, how to read it, how to feed results back."""

    name: ClassVar[str]
    """The name `parse(..., dialect=name)` uses."""
    description: ClassVar[str] = ""

    openers: ClassVar[tuple[Opener, ...]] = ()
    """A text format's regions, as data: each `Opener`'s markers and, for calls, its body format. A dialect
    that declares them needs no parser class."""

    parser: ClassVar[type[StreamParser] | None] = None
    """The parser class, for a format its openers cannot say (a `RegionParser` subclass with hooks, or a
    `NativeParser` for a provider's structured output). None (the default) for one its openers say: a class
    attribute either way, as looking up a missing one raises inside, ~0.3 µs a model turn."""

    def stream_parser(self, tools: ToolIndex) -> StreamParser:
        """A fresh incremental parser for one model output (override only when `openers` and `parser` cannot
        say how).

        Raises:
            UserError: The dialect declares neither `openers` nor `parser`, or a call opener with no body.
        """
        parser = type(self).parser
        if parser is not None:
            return parser(self.name, tools)
        openers = self.openers
        if _CHECKED.get(id(openers)) is not openers:  # checked once per tuple, not on every model turn
            self._check(openers)
        return region_parser(self.name, tools, openers)

    def _check(self, openers: tuple[Opener, ...]) -> None:
        """Refuse openers no parser can read; remember ones that pass."""
        if not openers:
            raise UserError(
                f"the {self.name!r} dialect declares no parser: set `openers = (Opener(start, ends=(end,), "
                "body=JsonCalls()), ...)` on the class, or `parser = YourParser` (a StreamParser subclass), or "
                "override stream_parser()"
            )
        for o in openers:
            if o.kind == "call" and o.body is None:
                raise UserError(
                    f"the {self.name!r} dialect's opener {o.start!r} reads calls but has no body format: give it "
                    "body=... (JsonCalls(), XmlFunctions(), ArgPairs(), XmlInvoke(...), PythonCalls(), or a Body "
                    "of your own)"
                )
        if len(_CHECKED) >= 256:  # openers made afresh per dialect instance must not grow it without end
            _CHECKED.clear()
        _CHECKED[id(openers)] = openers  # the entry holds its tuple, so the id is not reused while it is kept

    def model_events(self, event: Mapping[str, Any]) -> list[ModelChunk]:
        """One of the provider's JSON objects (a stream event or a whole response) as the typed events a model
        streams: how a test double or a recording written as provider JSON is streamed (native dialects).

        Raises:
            UserError: The dialect reads text, not a provider's JSON.
        """
        parser: type[StreamParser] | None = getattr(type(self), "parser", None)
        if parser is None or NativeParser not in parser.__mro__:  # (an ABC's issubclass costs ~1 µs an event)
            raise UserError(
                f"the {self.name} dialect reads text, not a provider's JSON objects: stream text "
                "(TextChunk), or name a native dialect (openai, anthropic, gemini)"
            )
        return cast("type[NativeParser]", parser).read(event)

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
            f'<tool_response name="{r.name}" id="{r.call_id}">\n{result_text(r.envelope)}\n</tool_response>'
            for r in results
        )
