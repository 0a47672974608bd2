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

    def tools(self) -> Mapping[str, Tool[..., Any]]:
        out: dict[str, Tool[..., Any]] = {}
        for name, t in self.inner.tools().items():
            renamed = f"{self.prefix}{self.separator}{name}"
            out[renamed] = t.with_spec(t.spec.model_copy(update={"name": renamed}))
        return out
