"""The tool-pack extension point: a typed registry, filled by built-in packs and by entry points alike.

A pack is a name and a function from a `PackConfig` (what one agent may touch) to a `Toolset`. tether's own
packs register through `register_pack`, exactly as a third-party package would; packages can also declare
an entry point in the `tether.tool_packs` group naming a `ToolPack`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from tether.exceptions import UserError
from tether.sandbox import SandboxLimits
from tether.tools import Toolset

__all__ = ["ENTRY_POINT_GROUP", "PackConfig", "ToolPack", "build_tools", "get_pack", "packs", "register_pack"]

ENTRY_POINT_GROUP = "tether.tool_packs"


@dataclass(frozen=True, kw_only=True)
class PackConfig:
    """What one agent's tools may touch; every field has a safe default."""

    roots: tuple[Path, ...] = ()
    """Directories file and search tools may use; the first is where relative paths start."""
    workspace: Path | None = None
    """The sandbox's writable workspace for code-running tools (default: the first root)."""
    autoexec: bool = False
    """Enable code-running tools (terminal, python, js). Off by default (seed 000)."""
    unsandboxed: bool = False
    """Run code without bubblewrap where it is missing. Only by explicit choice: it runs on the host."""
    network: bool = False
    """Give code-running tools the network."""
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    """Resource limits of code-running tools."""
    http_allowed_hosts: tuple[str, ...] = ()
    """Hosts `api_call` may reach (exact names, or `*.example.com`); empty disables it."""
    session_id: str = "default"
    """Where per-session state (memory hints) is kept apart."""
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Pack-specific settings, by key."""

    @property
    def exec_workspace(self) -> Path:
        if self.workspace is not None:
            return self.workspace
        if self.roots:
            return self.roots[0]
        raise UserError(
            "code-running tools need a workspace: PackConfig(workspace=Path('work')) or roots=[...]"
        )


@dataclass(frozen=True)
class ToolPack:
    """A named family of tools built per agent from a `PackConfig`."""

    name: str
    build: Callable[[PackConfig], Toolset]
    description: str = ""


_PACKS: dict[str, ToolPack] = {}
_entry_points_loaded = False


def register_pack(pack: ToolPack, *, replace: bool = False) -> ToolPack:
    """Make `pack` available by name; returns it (usable as a decorator-style one-liner)."""
    if pack.name in _PACKS and not replace and _PACKS[pack.name] is not pack:
        raise UserError(
            f"a tool pack named {pack.name!r} is already registered; pass replace=True to override it."
        )
    _PACKS[pack.name] = pack
    return pack


def packs() -> Mapping[str, ToolPack]:
    """Every registered pack, built-in and from entry points."""
    _load_entry_points()
    return dict(_PACKS)


def get_pack(name: str) -> ToolPack:
    """The pack called `name`.

    Raises:
        UserError: naming the packs that exist.
    """
    found = packs().get(name)
    if found is None:
        raise UserError(f"no tool pack named {name!r}; available: {', '.join(sorted(_PACKS))}")
    return found


def build_tools(names: Iterable[str], config: PackConfig) -> Toolset:
    """One toolset of the named packs, configured by `config`."""
    tools = [t for name in names for t in get_pack(name).build(config).tools().values()]
    return Toolset(*tools)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        pack = ep.load()
        if not isinstance(pack, ToolPack):
            raise UserError(
                f"entry point {ep.name!r} in {ENTRY_POINT_GROUP} must name a ToolPack, not {pack!r}"
            )
        register_pack(pack, replace=True)
