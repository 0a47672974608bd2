"""The `meowstik` pack as `tether run --pack meowstik` builds it from a `PackConfig`."""

from __future__ import annotations

import os

from tether.builtin import PackConfig, ToolPack
from tether.packs.meowstik._search import BraveSearch, DuckDuckGoSearch, SearchBackend
from tether.packs.meowstik._tools import meowstik_tools
from tether.tools import Toolset

__all__ = ["MEOWSTIK_PACK"]


def _build(config: PackConfig) -> Toolset:
    brave_key = os.environ.get("TETHER_BRAVE_API_KEY")
    search: SearchBackend = BraveSearch(brave_key) if brave_key else DuckDuckGoSearch()
    return meowstik_tools(search=search, roots=config.roots)


MEOWSTIK_PACK = ToolPack(
    "meowstik",
    _build,
    "Meowstik's web_search (DuckDuckGo, or Brave with TETHER_BRAVE_API_KEY), file_put, custom",
)
