"""`PERIN_PACK`: the pack's entry point, cheap to load (tether loads every pack's entry point to list them);
the network and its SQLAlchemy tables load when the pack is first built."""

from __future__ import annotations

import os

from tether.builtin import PackConfig, ToolPack
from tether.store import DEFAULT_URL
from tether.tools import Toolset

__all__ = ["PERIN_PACK"]


def _build(config: PackConfig) -> Toolset:
    from tether.packs.perin._network import Network
    from tether.packs.perin._tools import perin_pack

    url = config.options.get("perin_url") or os.environ.get("TETHER_JOURNAL_URL") or DEFAULT_URL
    return perin_pack(Network(str(url)))


PERIN_PACK = ToolPack(
    "perin",
    _build,
    "Perin scheduling network (seed 002): schedule and confirm meetings with connections, notifications; "
    "option perin_url (default: the journal's database, TETHER_JOURNAL_URL or ./tether-journal.db)",
)
