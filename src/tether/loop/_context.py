"""What tools add to the model's context before each model turn (`Tool.context_source`), e.g. the memory
pack's working set: the files `memory.advise` marked hot. Bounded, so no tool can flood the context."""

from __future__ import annotations

from collections.abc import Sequence

from tether.tools import AbstractToolset, ContextSource

__all__ = ["MAX_CONTEXT_CHARS", "context_sources", "with_context"]

MAX_CONTEXT_CHARS = 32_000
"""The most characters tools together add to the system prompt in one model turn."""


def context_sources(toolset: AbstractToolset) -> tuple[ContextSource, ...]:
    """The toolset's context sources, in tool order (read once per run, as the tools offered are)."""
    return tuple(t.context_source for t in toolset.tools().values() if t.context_source is not None)


def with_context(system: str, sources: Sequence[ContextSource], session_id: str | None) -> str:
    """`system` followed by what each source adds now, within `MAX_CONTEXT_CHARS`."""
    if not sources:
        return system
    added = "\n\n".join(text for source in sources if (text := source(session_id)))
    if len(added) > MAX_CONTEXT_CHARS:
        added = added[:MAX_CONTEXT_CHARS] + "\n... (cut: the tools' context is limited)"
    return "\n\n".join(part for part in (system, added) if part)
