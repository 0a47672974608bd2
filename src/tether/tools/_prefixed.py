from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tether.exceptions import UserError
from tether.tools._tool import Tool
from tether.tools._toolset import AbstractToolset

__all__ = ["PrefixedToolset"]


class PrefixedToolset(AbstractToolset):
    """The tools of `inner` renamed `<prefix><separator><name>`, e.g. `read` -> `fs.read`."""

    def __init__(self, inner: AbstractToolset, prefix: str, separator: str = "."):
        if not prefix:
            raise UserError("prefixed() needs a non-empty prefix, e.g. ts.prefixed('fs').")
        self.inner = inner
        self.prefix = prefix
        self.separator = separator
        self._made: tuple[Mapping[str, Tool[..., Any]], Mapping[str, Tool[..., Any]]] | None = None
        """The inner mapping last renamed, and the result: the same tool objects while it is unchanged
        (a tool's validator and the executor's plan for it are kept per object)."""

    def tools(self) -> Mapping[str, Tool[..., Any]]:
        inner = self.inner.tools()
        if self._made is not None and self._made[0] is inner:
            return self._made[1]
        out: dict[str, Tool[..., Any]] = {}
        for name, t in inner.items():
            renamed = f"{self.prefix}{self.separator}{name}"
            out[renamed] = t.with_spec(t.spec.model_copy(update={"name": renamed}))
        self._made = (inner, out)
        return out
