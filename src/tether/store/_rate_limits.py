"""Rate-limit state: one token bucket per tool and principal, in memory or beside the journal.

In memory, buckets last as long as the executor; in the journal's database (`SqlJournal.rate_limits`), every
executor and process sharing that database shares them, so a limit holds across workers and restarts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from tether.store._entries import JournalEntry
from tether.types import RateLimit

__all__ = ["MemoryRateLimits", "RateLimited", "RateLimits", "RateToken", "TokenBucket", "Write"]


@dataclass(slots=True)
class TokenBucket:
    """`limit.calls` tokens, refilled continuously over `limit.per_seconds`; a call takes one."""

    limit: RateLimit
    tokens: float
    updated: float

    def take(self, now: float) -> float:
        """Take a token and return 0, or return the seconds until one is available."""
        rate = self.limit.calls / self.limit.per_seconds
        self.tokens = min(float(self.limit.calls), self.tokens + max(0.0, now - self.updated) * rate)
        self.updated = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / rate


@dataclass(frozen=True, slots=True)
class RateToken:
    """A token to take from the bucket `key` in the same transaction as the journal write that starts a call
    (`SqlJournal.claim` and `append` with `take=`): one commit where there were two."""

    key: str
    limit: RateLimit


@dataclass(frozen=True, slots=True)
class Write:
    """One journal write of a batch (`SqlJournal.write_batch`): claim `entry`'s idempotency key (`claim`) or
    append it, taking `take` first."""

    entry: JournalEntry
    claim: bool = False
    take: RateToken | None = None


class RateLimited(Exception):
    """A journal write with `take=` found its bucket empty: nothing was written (neither the entry nor the
    bucket); a token is free in `retry_after` seconds."""

    def __init__(self, retry_after: float):
        super().__init__(f"no rate-limit token for {retry_after:.3f} s")
        self.retry_after = retry_after


class RateLimits(Protocol):
    """Where token buckets live. A store that does I/O sets `blocking = True` (called from a thread)."""

    blocking: bool

    def take(self, key: str, limit: RateLimit) -> float:
        """Take a token from the bucket `key` (made full on first use): 0, or the seconds until one is free."""
        ...


class MemoryRateLimits:
    """Buckets in this process's memory, on a monotonic clock."""

    blocking = False

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._buckets: dict[str, TokenBucket] = {}

    def take(self, key: str, limit: RateLimit) -> float:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None or bucket.limit != limit:
            bucket = self._buckets[key] = TokenBucket(limit, float(limit.calls), now)
        return bucket.take(now)
