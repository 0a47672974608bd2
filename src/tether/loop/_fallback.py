"""Planner and responder stand in for each other when one fails (seed 002's multi-model fallback), behind a
circuit breaker: a model that keeps failing is skipped for a while instead of being tried on every turn."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from tether.models import Model

__all__ = ["Fallback"]

TRIP_AFTER = 3
"""Consecutive failures that open a model's breaker."""
COOL_DOWN_S = 30.0
"""How long an open breaker sends turns straight to the other model before the first is tried again."""


@dataclass(slots=True)
class _Breaker:
    failures: int = 0
    open_until: float = 0.0


@dataclass(slots=True)
class Fallback:
    """The breakers of an agent's models, kept across its runs."""

    breakers: dict[int, _Breaker] = field(default_factory=dict[int, _Breaker])

    def order(self, first: Model, backup: Model | None) -> tuple[Model, ...]:
        """The models to try for a turn, in order: `first`, then `backup`; `backup` first while `first`'s
        breaker is open."""
        if backup is None:
            return (first,)
        breaker = self.breakers.get(id(first))
        if breaker is not None and time.monotonic() < breaker.open_until:
            return (backup, first)
        return (first, backup)

    def failed(self, model: Model) -> None:
        breaker = self.breakers.setdefault(id(model), _Breaker())
        breaker.failures += 1
        if breaker.failures >= TRIP_AFTER:
            breaker.failures = 0
            breaker.open_until = time.monotonic() + COOL_DOWN_S

    def succeeded(self, model: Model) -> None:
        breaker = self.breakers.get(id(model))
        if breaker is not None:
            breaker.failures = 0
