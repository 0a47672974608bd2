"""Limits that end any run whatever its termination policy, and one run's use of them."""

from __future__ import annotations

import time
from dataclasses import dataclass

from tether.loop._termination import End, TurnResult
from tether.types import ErrorCode, ErrorEnvelope

__all__ = ["Budget", "LimitReached", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Limits that end any run, each with its own terminal reason; they hold inside a model turn too."""

    max_iterations: int = 20
    """Model turns per run (`max_iterations`)."""
    max_tool_calls: int = 100
    """Tool calls per run (`max_tool_calls`): calls beyond it, even in the turn that reaches it, are refused
    with `QUOTA_EXCEEDED` rather than run, and the run ends."""
    max_tokens: int | None = None
    """Approximate model output tokens per run, counted as characters / 4 (`max_tokens`); a model still
    streaming when it is reached is stopped (a runaway generation is not waited for)."""
    max_wall_time_s: float | None = None
    """Seconds per run (`max_wall_time`): the model or tools still working when it is up are cancelled."""
    retry_budget: int = 3
    """Refusals one tool may collect in a run before the run stops (`retry_budget`)."""

    def exceeded(self, *, iterations: int, tool_calls: int, chars: int, elapsed_s: float) -> str | None:
        """The reason the run must stop now, if a limit is reached."""
        if iterations >= self.max_iterations:
            return "max_iterations"
        if tool_calls >= self.max_tool_calls:
            return "max_tool_calls"
        if self.max_tokens is not None and chars / 4 >= self.max_tokens:
            return "max_tokens"
        if self.max_wall_time_s is not None and elapsed_s >= self.max_wall_time_s:
            return "max_wall_time"
        return None


class LimitReached(Exception):
    """A limit was reached inside a model turn; the run ends with `reason`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Budget:
    """One run's use of its limits: model turns, output written, refusals per tool, time since it began."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.iterations = 0
        self.chars = 0
        """Model output so far, in characters (text dialects: all of it; native: its text and arguments)."""
        self.max_chars = None if limits.max_tokens is None else limits.max_tokens * 4
        self.refusals: dict[str, int] = {}
        self.started = time.monotonic()

    def next_turn(self, tool_calls: int) -> str | None:
        """Count a new model turn, or the reason there may be none (`tool_calls`: the run's calls so far)."""
        reason = self.limits.exceeded(
            iterations=self.iterations,
            tool_calls=tool_calls,
            chars=self.chars,
            elapsed_s=time.monotonic() - self.started,
        )
        if reason is None:
            self.iterations += 1
        return reason

    def wrote(self, chars: int) -> None:
        """Count model output as it streams: a model running away is stopped, not waited for."""
        self.chars += chars
        if self.max_chars is not None and self.chars >= self.max_chars:
            raise LimitReached("max_tokens")

    def refused(self, turn: TurnResult) -> End | None:
        """The end of the run when a tool has been refused more often than the retry budget allows."""
        for call, envelope in zip(turn.calls, turn.envelopes, strict=True):
            if isinstance(envelope, ErrorEnvelope) and envelope.error.code != ErrorCode.QUOTA_EXCEEDED:
                count = self.refusals[call.name] = self.refusals.get(call.name, 0) + 1
                if count > self.limits.retry_budget:
                    problem = f"{call.name} was refused {count} times in this run; stopping."
                    return End(None, "retry_budget", problem=problem)
        return None
