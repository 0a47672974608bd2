"""Guard 5: the run stays within its quotas of calls, output bytes and wall time (`QUOTA_EXCEEDED`)."""

from __future__ import annotations

import time
from typing import Any

from tether.execution._decisions import Allow, Decision, refusal
from tether.execution._guards._base import Attempt
from tether.execution._policy import Policy
from tether.tools import Tool
from tether.types import ErrorCode

__all__ = ["QuotaGuard"]

_ALLOW = Allow()


class QuotaGuard:
    """Counts a call against the run's quota when it passes; output bytes are added by the executor."""

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        return tool is not None  # every call counts against the run

    async def check(self, attempt: Attempt) -> Decision:
        return self.check_now(attempt)

    def check_now(self, attempt: Attempt) -> Decision:
        """The decision, without waiting (the executor calls this, not `check`)."""
        run, policy = attempt.run, attempt.policy
        if run.started_at is None:
            run.started_at = time.monotonic()
        most, own = policy.max_calls_per_run, run.max_calls  # the lower applies
        if own is not None and (most is None or own < most):
            most = own
        exceeded: str | None = None
        if most is not None and run.calls >= most:
            exceeded = f"this run may make at most {most} tool calls"
        elif (
            policy.max_output_bytes_per_run is not None
            and run.output_bytes >= policy.max_output_bytes_per_run
        ):
            exceeded = f"this run may receive at most {policy.max_output_bytes_per_run} bytes of tool output"
        elif policy.max_wall_time_s_per_run is not None and run.elapsed_s() >= policy.max_wall_time_s_per_run:
            exceeded = f"this run may start tool calls for at most {policy.max_wall_time_s_per_run:g} s"
        if exceeded is None:
            run.calls += 1
            return _ALLOW
        return refusal(
            ErrorCode.QUOTA_EXCEEDED,
            f"Quota exceeded: {exceeded}.",
            recoverable=False,
            suggestion="Stop calling tools; answer the user with what you have, and say what is left undone.",
        )
