from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tether.tools._tool import Tool
from tether.tools._toolset import AbstractToolset

__all__ = ["FilteredToolset"]


class FilteredToolset(AbstractToolset):
    """The tools of `inner` for which `keep(tool)` is true, e.g. `ts.filtered(lambda t: t.spec.category == "fs")`."""

    def __init__(self, inner: AbstractToolset, keep: Callable[[Tool[..., Any]], bool]):
        self.inner = inner
        self.keep = keep

    def tools(self) -> Mapping[str, Tool[..., Any]]:
        return {name: t for name, t in self.inner.tools().items() if self.keep(t)}
