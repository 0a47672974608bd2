"""`agent_tools`: an agent's tools from the places a user names them, built one way for every front end."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path

from tether.builtin._registry import PackConfig, build_tools
from tether.tools import AbstractToolset, Toolset, load_tools

__all__ = ["agent_tools"]


def agent_tools(
    sources: Iterable[str] = (),
    packs: Sequence[str] = (),
    roots: Sequence[str | Path] = (),
    base: Path = Path(),
    *,
    read_only: bool = False,
    settings: PackConfig | None = None,
    extra: Iterable[AbstractToolset] = (),
) -> AbstractToolset:
    """An agent's tools as `tether run`, `tether chat` and `tether serve` build them.

    Args:
        sources: Tool definition files (`.py`, `.yaml`, `.ts`, `.json`; relative to `base`) and modules
            (`pkg.tools`), as `load_tools` reads them.
        packs: Built-in (or registered) tool packs, e.g. `["fs", "search"]`.
        roots: The directories the packs may use (relative to `base`; default: `base`). The first is where
            YAML command tools from `sources` work.
        base: Where relative paths start (the current directory, or a config file's directory).
        read_only: Keep only the tools without side effects (`fs.read`, not `fs.write`), `extra` included.
        settings: The packs' other settings (autoexec, network, allowed hosts, ...); its `roots` are replaced.
        extra: Toolsets added as they are, e.g. MCP servers' (`tether.mcp.MCPToolset`).
    """
    toolset: AbstractToolset = Toolset()
    workspace = (base / roots[0]).resolve() if roots else None
    for source in sources:
        toolset = toolset | load_tools(base / source if Path(source).suffix else source, workspace=workspace)
    if packs:
        confined = tuple((base / r).resolve() for r in roots or ["."])
        toolset = toolset | build_tools(packs, dataclasses.replace(settings or PackConfig(), roots=confined))
    for more in extra:
        toolset = toolset | more
    if read_only:
        toolset = toolset.filtered(lambda t: t.spec.side_effects == "none")
    return toolset
