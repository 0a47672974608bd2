"""The `meowstik` pack as `tether run --pack meowstik` builds it from a `PackConfig`."""

from __future__ import annotations

import importlib
import os
from typing import Any

from tether.builtin import PackConfig, ToolPack
from tether.packs.meowstik._search import BraveSearch, DuckDuckGoSearch, SearchBackend
from tether.packs.meowstik._tools import meowstik_tools
from tether.tools import Toolset

__all__ = ["MEOWSTIK_PACK"]


def _build(config: PackConfig) -> Toolset:
    brave_key = os.environ.get("TETHER_BRAVE_API_KEY")
    search: SearchBackend = BraveSearch(brave_key) if brave_key else DuckDuckGoSearch()
    return meowstik_tools(search=search, roots=config.roots, knowledge=_knowledge(config))


def _knowledge(config: PackConfig) -> Any:
    """The knowledge base named by `options["knowledge_db"]`, when the knowledge layer is installed."""
    path = config.options.get("knowledge_db")
    if path is None:
        return None
    try:  # by name: tether.knowledge is another package's, and optional
        knowledge: Any = importlib.import_module("tether.knowledge")
    except ImportError:
        return None
    return knowledge.KnowledgeBase(path)


MEOWSTIK_PACK = ToolPack(
    "meowstik",
    _build,
    "Meowstik's web_search (DuckDuckGo, or Brave with TETHER_BRAVE_API_KEY), file_put, file_ingest",
)
