"""The audit journal: an append-only record of every tool call (intent before, result after).

`MemoryJournal` keeps it in memory; `SqlJournal` in SQLite (a file, WAL) or PostgreSQL (by URL), where it
survives crashes: a call whose intent has no result is *in doubt*, reported as such and, if mutating,
never repeated until resolved. Rate-limit buckets live beside it (`RateLimits`: `MemoryRateLimits`, or
`SqlJournal.rate_limits` shared by every executor on the database), as do conversations (`SessionStore`).
`SqlJournal` (and SQLAlchemy) load on first use. `tether.store.internal` holds the machinery tether's own
packages share (what the executor and `tether audit` decide with); it is not user API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tether.store._entries import DEFAULT_URL as DEFAULT_URL
from tether.store._entries import EntryKind as EntryKind
from tether.store._entries import JournalEntry as JournalEntry
from tether.store._entries import Lookup as Lookup
from tether.store._entries import Outcome as Outcome
from tether.store._entries import WouldWait as WouldWait
from tether.store._journal import Journal as Journal
from tether.store._journal import MemoryJournal as MemoryJournal
from tether.store._rate_limits import MemoryRateLimits as MemoryRateLimits
from tether.store._rate_limits import RateLimits as RateLimits
from tether.store._rate_limits import TokenBucket as TokenBucket
from tether.store._stats import JournalStats as JournalStats
from tether.store._stats import ToolStats as ToolStats
from tether.store._stats import compute_stats as compute_stats

if TYPE_CHECKING:
    from tether.store._sessions import SessionStore as SessionStore
    from tether.store._sql import SqlJournal as SqlJournal
    from tether.store._sql_rate_limits import SqlRateLimits as SqlRateLimits

__all__ = [
    "DEFAULT_URL",
    "EntryKind",
    "Journal",
    "JournalEntry",
    "JournalStats",
    "Lookup",
    "MemoryJournal",
    "MemoryRateLimits",
    "Outcome",
    "RateLimits",
    "SessionStore",
    "SqlJournal",
    "SqlRateLimits",
    "TokenBucket",
    "ToolStats",
    "WouldWait",
    "compute_stats",
]

_LAZY = {
    "SqlJournal": "tether.store._sql",
    "SessionStore": "tether.store._sessions",
    "SqlRateLimits": "tether.store._sql_rate_limits",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tether.store' has no attribute {name!r}")
