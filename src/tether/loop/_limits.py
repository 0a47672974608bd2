"""Limits that end any run whatever its termination policy, and one run's use of them."""

from __future__ import annotations

import time
from dataclasses import dataclass

from tether.loop._termination import End, TurnResult
from tether.types import ErrorCode, ErrorEnvelope, OkEnvelope

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
    """Model output tokens per run (`max_tokens`): a turn counts the output tokens its model reports
    (`tether.models.Usage`), or, until it reports them (and for models that never do), its output's
    characters / 4. A model still streaming when the limit is reached is stopped (a runaway generation is not
    waited for)."""
    max_wall_time_s: float | None = None
    """Seconds per run (`max_wall_time`): the model or tools still working when it is up are cancelled."""
    retry_budget: int = 3
    """Refusals one tool may collect in a run before the run stops (`retry_budget`)."""

    def exceeded(self, *, iterations: int, tool_calls: int, tokens: float, elapsed_s: float) -> str | None:
        """The reason the run must stop now, if a limit is reached (`tokens`: output tokens so far)."""
        return _reached(self, iterations, tool_calls, tokens, elapsed_s)


def _reached(limits: Limits, iterations: int, tool_calls: int, tokens: float, elapsed_s: float) -> str | None:
    """`Limits.exceeded`, called positionally once a model turn (keywords cost ~0.3 µs more)."""
    if iterations >= limits.max_iterations:
        return "max_iterations"
    if tool_calls >= limits.max_tool_calls:
        return "max_tool_calls"
    if limits.max_tokens is not None and tokens >= limits.max_tokens:
        return "max_tokens"
    if limits.max_wall_time_s is not None and elapsed_s >= limits.max_wall_time_s:
        return "max_wall_time"
    return None


class LimitReached(Exception):
    """A limit was reached inside a model turn; the run ends with `reason`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Budget:
    """One run's use of its limits: model turns, output written, refusals per tool, time since it began.

    Output tokens: a turn counts what its model reports (`Usage.output_tokens`, a running total for the
    turn), and until then its characters over the characters per token of the run's reported turns (4 before
    any report), so that a runaway model is stopped mid-stream either way.
    """

    __slots__ = (
        "_reported",
        "chars",
        "chars_per_token",
        "iterations",
        "limits",
        "max_tokens",
        "refusals",
        "started",
        "tokens",
        "turn_chars",
        "turn_tokens",
    )

    def __init__(self, limits: Limits):
        self.limits = limits
        self.iterations = 0
        self.chars = 0
        """Model output so far, in characters (text dialects: all of it; native: its text and arguments)."""
        self.tokens = 0.0
        """Output tokens of the run's earlier turns: as their models reported them, else estimated."""
        self.turn_chars = 0
        """The current turn's output in characters."""
        self.turn_tokens = 0
        """The current turn's output tokens as its model reported them (0: not reported yet)."""
        self.chars_per_token = 4.0
        """For turns without a report: the characters per token of the run's reported turns, 4 before any."""
        self._reported = [0, 0]  # characters and tokens of the run's reported turns
        self.max_tokens = limits.max_tokens
        self.refusals: dict[str, int] = {}
        self.started = time.monotonic()

    def used(self) -> float:
        """Output tokens so far: the earlier turns', and the current one's as reported or estimated."""
        turn = self.turn_tokens
        return self.tokens + (turn if turn else self.turn_chars / self.chars_per_token)

    def next_turn(self, tool_calls: int) -> str | None:
        """Count a new model turn, or the reason there may be none (`tool_calls`: the run's calls so far)."""
        if self.turn_tokens:  # the turn just taken was reported: it calibrates the estimate of later ones
            reported = self._reported
            reported[0] += self.turn_chars
            reported[1] += self.turn_tokens
            if reported[0]:
                self.chars_per_token = reported[0] / reported[1]
        if self.turn_chars or self.turn_tokens:
            self.tokens, self.turn_chars, self.turn_tokens = self.used(), 0, 0
        reason = _reached(
            self.limits, self.iterations, tool_calls, self.tokens, time.monotonic() - self.started
        )
        if reason is None:
            self.iterations += 1
        return reason

    def wrote(self, chars: int) -> None:
        """Count model output as it streams: a model running away is stopped, not waited for."""
        self.chars += chars
        self.turn_chars += chars
        if self.max_tokens is not None and self.used() >= self.max_tokens:
            raise LimitReached("max_tokens")

    def reported(self, output_tokens: int) -> None:
        """The model reports the turn's output tokens so far (a provider's `Usage`): they replace the
        estimate from characters. A report is a running total for the turn, so the largest is kept; one of
        no output tokens (e.g. a report of input tokens only) changes nothing."""
        if output_tokens <= self.turn_tokens:
            return
        self.turn_tokens = output_tokens
        if self.max_tokens is not None and self.used() >= self.max_tokens:
            raise LimitReached("max_tokens")

    def refused(self, turn: TurnResult) -> End | None:
        """The end of the run when a tool has been refused more often than the retry budget allows."""
        if not turn.envelopes:  # a turn without calls (every run's last): nothing to count
            return None
        for call, envelope in zip(turn.calls, turn.envelopes, strict=True):
            if type(envelope) is OkEnvelope or not isinstance(
                envelope, ErrorEnvelope
            ):  # (no ABC check if ok)
                continue
            if envelope.error.code != ErrorCode.QUOTA_EXCEEDED:
                count = self.refusals[call.name] = self.refusals.get(call.name, 0) + 1
                if count > self.limits.retry_budget:
                    problem = f"{call.name} was refused {count} times in this run; stopping."
                    return End(None, "retry_budget", problem=problem)
        return None
