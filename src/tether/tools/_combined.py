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

    def tools(self) -> Mapping[str, Tool[..., Any]]:
        out: dict[str, Tool[..., Any]] = {}
        for toolset in self.toolsets:
            for name, t in toolset.tools().items():
                if name in out:
                    raise UserError(
                        f"Tool {name!r} is defined in more than one of the combined toolsets; "
                        "give one of them a prefix with .prefixed('ns') or filter it out."
                    )
                out[name] = t
        return out
