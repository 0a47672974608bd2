"""What an agent's tools give each of its runs (the tools offered, the parser's index, the context sources,
which calls may start while the model streams), worked out once while its toolset stays the same."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tether.dialects import ToolIndex
from tether.loop._context import context_sources
from tether.tools import AbstractToolset, ContextSource, redact
from tether.types import ToolSpec

__all__ = ["STREAMABLE", "Offer"]

STREAMABLE = frozenset({"none", "idempotent"})
"""Side-effect classes whose calls may start while the model is still streaming."""


class Offer:
    """An agent's tools as its runs use them, for one state of its toolset (`AbstractToolset.tools()` returns
    a new mapping when the tools change, so the mapping's identity says whether this is still current)."""

    __slots__ = ("_streamable", "context", "index", "secret_free", "specs", "tools", "toolset")

    def __init__(self, toolset: AbstractToolset, tools: Mapping[str, Any]):
        self.toolset = toolset
        self.tools = tools
        self.specs: tuple[ToolSpec, ...] = tuple(toolset.specs())
        """The tools offered to the model."""
        self.index = ToolIndex(self.specs)
        """The parser's view of them."""
        self.context: tuple[ContextSource, ...] = context_sources(toolset)
        """What tools add to the system prompt before each model turn (memory.advise's working set)."""
        self.secret_free = not any(_marks_secret(spec) for spec in self.specs)
        """Whether no tool offered marks anything secret in its schemas: then a run that knows no secret
        either (no `Session.secrets`) has nothing its events could show, and needs no redactor for them."""
        self._streamable: dict[str, bool] = {}

    def current(self, toolset: AbstractToolset) -> bool:
        """Whether this offer still describes `toolset`."""
        return toolset is self.toolset and toolset.tools() is self.tools

    def streamable(self, name: str) -> bool:
        """Whether a call to `name` may start while the model is still streaming: a tool without side effects
        (or idempotent) that need not run alone."""
        known = self._streamable.get(name)
        if known is None:
            tool = self.toolset.get(name)
            if tool is None:  # not one of the tools (a name the model made up): nothing is remembered
                return False
            spec = tool.spec
            known = self._streamable[name] = spec.side_effects in STREAMABLE and not spec.sequential
        return known


def _marks_secret(spec: ToolSpec) -> bool:
    """Whether the tool's input or output schema marks anything secret (`redact` returns the very value it is
    given iff its schema marks nothing)."""
    probe: dict[str, Any] = {}
    return redact(probe, spec.input_schema) is not probe or (
        bool(spec.output_schema) and redact(probe, spec.output_schema) is not probe
    )
