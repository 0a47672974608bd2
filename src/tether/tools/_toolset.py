"""Toolsets: named collections of tools. One abstract method; filtering, prefixing and combining are wrappers."""

from __future__ import annotations

import difflib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from tether.exceptions import UserError
from tether.tools._tool import Tool
from tether.types import ToolSpec

if TYPE_CHECKING:
    from tether.tools._combined import CombinedToolset
    from tether.tools._filtered import FilteredToolset
    from tether.tools._prefixed import PrefixedToolset

__all__ = ["AbstractToolset", "Toolset", "provider_alias"]

AnyTool = Tool[..., Any]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def provider_alias(name: str) -> str:
    """The name a provider that allows only `[A-Za-z0-9_-]{1,64}` sees: `fs.read` -> `fs_read`."""
    return _UNSAFE.sub("_", name)[:64]


class AbstractToolset(ABC):
    """A collection of tools, looked up by name or by provider-safe alias."""

    @abstractmethod
    def tools(self) -> Mapping[str, AnyTool]:
        """The tools, by name, in the order they should be shown to a model.

        Return the same mapping while the tools stay the same and a new one when they change (never change
        a returned mapping in place): toolsets built on this one (`|`, `.prefixed`) rebuild only then.
        """

    def get(self, name: str) -> AnyTool | None:
        """The tool called `name`, or whose provider-safe alias is `name` (`fs_read` finds `fs.read`)."""
        tools = self.tools()
        found = tools.get(name)
        if found is None and (real := self.aliases().get(name)) is not None:
            found = tools.get(real)
        return found

    def aliases(self) -> dict[str, str]:
        """Provider-safe alias -> real name, for every tool whose name a provider would refuse.

        Aliases are reversible: where two names would share one (`fs.read` and `fs_read`), the later one gets
        a numbered alias (`fs_read_2`).
        """
        taken = set(self.tools())
        aliases: dict[str, str] = {}
        for name in self.tools():
            alias = provider_alias(name)
            if alias == name:
                continue
            candidate, n = alias, 2
            while candidate in taken or candidate in aliases:
                candidate, n = f"{alias[:60]}_{n}", n + 1
            aliases[candidate] = name
        return aliases

    def alias_of(self, name: str) -> str:
        """The provider-safe name for tool `name` (itself when already safe)."""
        for alias, real in self.aliases().items():
            if real == name:
                return alias
        return name

    def specs(self) -> list[ToolSpec]:
        return [t.spec for t in self.tools().values()]

    def names(self) -> list[str]:
        return list(self.tools())

    def closest(self, name: str, n: int = 3) -> list[str]:
        """The names most like `name`, best first: the suggestion for an unknown tool."""
        names = self.names()
        lowered = {candidate.lower(): candidate for candidate in names}
        matches = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
        return [lowered[m] for m in matches]

    def filtered(self, keep: Callable[[AnyTool], bool]) -> FilteredToolset:
        from tether.tools._filtered import FilteredToolset

        return FilteredToolset(self, keep)

    def prefixed(self, prefix: str, separator: str = ".") -> PrefixedToolset:
        from tether.tools._prefixed import PrefixedToolset

        return PrefixedToolset(self, prefix, separator)

    def __or__(self, other: AbstractToolset) -> CombinedToolset:
        from tether.tools._combined import CombinedToolset

        return CombinedToolset(self, other)

    def __iter__(self) -> Iterator[AnyTool]:
        return iter(self.tools().values())

    def __len__(self) -> int:
        return len(self.tools())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self.tools())})"


class Toolset(AbstractToolset):
    """A fixed set of tools: `Toolset(get_weather, search, ToolSpec(name="declared_only"))`.

    Plain functions are wrapped with `@tool` defaults; `ToolSpec`s become declared-only tools.
    """

    def __init__(self, *tools: AnyTool | ToolSpec | Callable[..., Any]):
        self._tools: dict[str, AnyTool] = {}
        for item in tools:
            self._add(_as_tool(item))

    def _add(self, item: AnyTool) -> None:
        if item.name in self._tools:
            raise UserError(
                f"Two tools are named {item.name!r}. Rename one (e.g. @tool(name=...)) or keep them apart "
                "with .prefixed('ns')."
            )
        self._tools[item.name] = item

    def tools(self) -> Mapping[str, AnyTool]:
        return self._tools


def _as_tool(item: AnyTool | ToolSpec | Callable[..., Any]) -> AnyTool:
    if isinstance(item, Tool):
        return cast("AnyTool", item)
    if isinstance(item, ToolSpec):
        return Tool(item)
    if callable(item):
        from tether.tools._function import tool

        return tool(item)
    raise UserError(f"Toolset() takes tools, ToolSpecs or functions, not {type(item).__name__}.")
