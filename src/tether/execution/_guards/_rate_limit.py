"""Guard 7: per tool and principal, calls stay within the tool's rate limit (`RATE_LIMITED`, seed 002).

The buckets live where the executor keeps them (`tether.store.RateLimits`): in memory, or in the journal's
database, where every executor sharing it shares them. There the guard only names the token
(`Attempt.rate_token`) and the journal takes it in the transaction that writes the call's intent (the
idempotency claim, or the intent itself): one commit a call fewer, and no token spent on a call that a
later guard refuses. That is why this guard runs after the quota and repaired-call guards.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

from tether.execution._decisions import Allow, Decision, Refuse, refusal
from tether.execution._guards._base import Attempt
from tether.execution._policy import Policy
from tether.store import RateLimits, WouldWait
from tether.store.internal import RateToken
from tether.tools import Tool
from tether.types import ErrorCode, RateLimit

__all__ = ["RateLimitGuard", "rate_limited"]


class RateLimitGuard:
    """Takes a token from the (tool, principal) bucket; tools without a `rate_limit` are not limited.

    Args:
        buckets: Where the buckets live.
        limiter: Bounds the threads a blocking store is called from.
        defer: Leave the token on the attempt for the journal to take with the intent (`buckets` must be
            the journal's own, and the journal must take tokens: `SqlJournal.takes_rate_tokens`).
    """

    def __init__(
        self, buckets: RateLimits, limiter: anyio.CapacityLimiter | None = None, *, defer: bool = False
    ):
        self._buckets = buckets
        self._limiter = limiter
        self._defer = defer

    async def _take(self, key: str, limit: RateLimit) -> float:
        buckets = self._buckets
        if not buckets.blocking:
            return buckets.take(key, limit)
        if getattr(buckets, "inline", False):  # see `SqlRateLimits.inline`: commit now unless it would wait
            take: Callable[..., float] = buckets.take  # an inline store's `take` accepts `wait`
            try:
                return take(key, limit, wait=False)
            except WouldWait:
                pass
        return await anyio.to_thread.run_sync(buckets.take, key, limit, limiter=self._limiter)

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        return tool is not None and tool.spec.rate_limit is not None

    async def check(self, attempt: Attempt) -> Decision:
        tool = attempt.tool
        assert tool is not None, "the unknown-tool guard runs first"
        limit = tool.spec.rate_limit
        if limit is None:
            return Allow()
        principal = attempt.run.principal.id  # a tool name has no spaces: the key is unambiguous
        key = tool.name if principal is None else f"{tool.name} {principal}"
        if self._defer:
            attempt.rate_token = RateToken(key, limit)
            return Allow()
        wait = await self._take(key, limit)
        if not wait:
            return Allow()
        return rate_limited(tool.name, limit, wait)


def rate_limited(name: str, limit: RateLimit, wait: float) -> Refuse:
    """The refusal for a call to tool `name` that has to wait `wait` seconds for a token."""
    retry_after = math.ceil(wait * 100) / 100
    return refusal(
        ErrorCode.RATE_LIMITED,
        f"{name} allows {limit.calls} calls per {limit.per_seconds:g} s; try again in {retry_after:g} s.",
        recoverable=True,
        suggestion=f"Wait {retry_after:g} s before calling {name} again, or do something else.",
        details={"retry_after_s": retry_after},
    )
