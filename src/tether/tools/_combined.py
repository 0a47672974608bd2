from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from tether.exceptions import UserError
from tether.tools._tool import Tool
from tether.tools._toolset import AbstractToolset

__all__ = ["CombinedToolset"]

_log = logging.getLogger("tether.tools")


class CombinedToolset(AbstractToolset):
    """Several toolsets as one (`a | b`).

    A name defined twice when they are first combined is an error, not a silent override. A name that
    clashes only later, when a part changes at run time (an MCP server listing a new tool), stays with
    the part that held it, and the newcomer is left out with a warning: a server must not take over a
    tool's name, nor break every other tool by clashing.
    """

    def __init__(self, *toolsets: AbstractToolset):
        self.toolsets = toolsets
        self._made: (
            tuple[tuple[Mapping[str, Tool[..., Any]], ...], Mapping[str, Tool[..., Any]], dict[str, int]]
            | None
        ) = None
        """The inner mappings last combined, the result, and which part each name came from: made again
        only when one of the mappings changes."""

    def tools(self) -> Mapping[str, Tool[..., Any]]:
        inner = tuple(toolset.tools() for toolset in self.toolsets)
        made = self._made
        if made is not None and all(a is b for a, b in zip(made[0], inner, strict=True)):
            return made[1]  # looked up on every call the executor answers: not rebuilt each time
        owners: dict[str, int] = {}
        for part, tools in enumerate(inner):
            for name in tools:
                owner = owners.setdefault(name, part)
                if owner == part:
                    continue
                if made is None:
                    raise UserError(
                        f"Tool {name!r} is defined in more than one of the combined toolsets; "
                        "give one of them a prefix with .prefixed('ns') or filter it out."
                    )
                if made[2].get(name) == part:
                    owners[name] = part  # the part that held the name keeps it
                _log.warning(
                    "tool %r now appears in two combined toolsets (parts %d and %d); keeping part %d's, which "
                    "had it first; give one of them a prefix with .prefixed('ns')",
                    name,
                    owner,
                    part,
                    owners[name],
                )
        out = {name: inner[part][name] for name, part in owners.items()}
        self._made = (inner, out, owners)
        return out
