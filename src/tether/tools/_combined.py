from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tether.exceptions import UserError
from tether.tools._tool import Tool
from tether.tools._toolset import AbstractToolset

__all__ = ["CombinedToolset"]


class CombinedToolset(AbstractToolset):
    """Several toolsets as one (`a | b`); a name defined twice is an error, not a silent override."""

    def __init__(self, *toolsets: AbstractToolset):
        self.toolsets = toolsets
        self._made: tuple[tuple[Mapping[str, Tool[..., Any]], ...], Mapping[str, Tool[..., Any]]] | None = (
            None
        )
        """The inner mappings last combined, and the result: made again only when one of them changes."""

    def tools(self) -> Mapping[str, Tool[..., Any]]:
        inner = tuple(toolset.tools() for toolset in self.toolsets)
        made = self._made
        if made is not None and all(a is b for a, b in zip(made[0], inner, strict=True)):
            return made[1]  # looked up on every call the executor answers: not rebuilt each time
        out: dict[str, Tool[..., Any]] = {}
        for tools in inner:
            for name, t in tools.items():
                if name in out:
                    raise UserError(
                        f"Tool {name!r} is defined in more than one of the combined toolsets; "
                        "give one of them a prefix with .prefixed('ns') or filter it out."
                    )
                out[name] = t
        self._made = (inner, out)
        return out
