"""Guard 5: per tool and principal, calls stay within the tool's rate limit (`RATE_LIMITED`, seed 002)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tether.execution._decisions import Allow, Decision, refusal
from tether.execution._policy import Policy
from tether.execution.guards._base import Attempt
from tether.tools import Tool
from tether.types import ErrorCode, RateLimit

__all__ = ["RateLimitGuard", "TokenBucket"]


@dataclass(slots=True)
class TokenBucket:
    """`limit.calls` tokens, refilled continuously over `limit.per_seconds`; a call takes one."""

    limit: RateLimit
    tokens: float
    updated: float

    def take(self, now: float) -> float:
        """Take a token and return 0, or return the seconds until one is available."""
        rate = self.limit.calls / self.limit.per_seconds
        self.tokens = min(float(self.limit.calls), self.tokens + (now - self.updated) * rate)
        self.updated = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / rate


class RateLimitGuard:
    """Token buckets in memory, one per (tool, principal); tools without a `rate_limit` are not limited."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._buckets: dict[tuple[str, str | None], TokenBucket] = {}

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        return tool is not None and tool.spec.rate_limit is not None

    async def check(self, attempt: Attempt) -> Decision:
        tool = attempt.tool
        assert tool is not None, "the unknown-tool guard runs first"
        limit = tool.spec.rate_limit
        if limit is None:
            return Allow()
        now = self._clock()
        key = (tool.name, attempt.run.principal.id)
        bucket = self._buckets.get(key)
        if bucket is None or bucket.limit != limit:
            bucket = self._buckets[key] = TokenBucket(limit, float(limit.calls), now)
        wait = bucket.take(now)
        if not wait:
            return Allow()
        retry_after = math.ceil(wait * 100) / 100
        return refusal(
            ErrorCode.RATE_LIMITED,
            f"{tool.name} allows {limit.calls} calls per {limit.per_seconds:g} s; "
            f"try again in {retry_after:g} s.",
            recoverable=True,
            suggestion=f"Wait {retry_after:g} s before calling {tool.name} again, or do something else.",
            details={"retry_after_s": retry_after},
        )
