"""What the routes share: the config, the agents by name, the stores and this worker's runs."""

from __future__ import annotations

from dataclasses import dataclass

from tether.serve._auth import Keys
from tether.serve._config import ServeConfig, ServedAgent
from tether.serve._index import SessionIndex
from tether.serve._runs import Runs
from tether.store import SessionStore, SqlJournal

__all__ = ["Served"]


@dataclass
class Served:
    """What the routes share: the config, the agents by name, the stores and this worker's runs."""

    config: ServeConfig
    agents: dict[str, ServedAgent]
    journal: SqlJournal
    store: SessionStore
    index: SessionIndex
    runs: Runs
    keys: Keys
