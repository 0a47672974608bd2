"""Who is calling (`Principal`) and the run that quotas, records and idempotency keys belong to (`Run`)."""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field
from typing import Any

from tether.types import ToolCallRecord

__all__ = ["Principal", "Run"]


class _RandomIds:
    """Random ids from the OS's generator, read 4 KiB at a time: a `getrandom` system call a run costs ~2.5
    µs on a busy VM. A forked child starts afresh (it must not repeat its parent's ids).

    Without a lock (~0.2 µs a run): each id takes the next number of a counter (`next` on an
    `itertools.count` is atomic), i.e. its own 16 bytes of a block of 256 ids; a caller that finds another
    block than its number's reads that block anew. Two threads may both read one: each then takes its own
    offset of its own random bytes, so no id repeats."""

    def __init__(self) -> None:
        self.numbers = itertools.count()
        self.block: tuple[int, bytes] = (-1, b"")
        """Which block of 256 ids, and its random bytes."""
        os.register_at_fork(after_in_child=self.forget)

    def forget(self) -> None:
        self.block = (-1, b"")

    def __call__(self) -> str:
        number = next(self.numbers)
        block = self.block
        if block[0] != number >> 8:
            block = self.block = (number >> 8, os.urandom(4096))
        at = (number & 255) * 16
        return block[1][at : at + 16].hex()


_random_id = _RandomIds()


def _no_records() -> list[ToolCallRecord]:
    """A new list (calling the generic alias `list[ToolCallRecord]` costs 3x as much)."""
    return []


@dataclass(frozen=True, slots=True)
class Principal:
    """The user or service on whose behalf calls run, and the scopes it holds (seed 002)."""

    id: str | None = None
    """`None` for an anonymous caller."""
    scopes: frozenset[str] = frozenset()

    @property
    def anonymous(self) -> bool:
        return self.id is None


@dataclass(slots=True)
class Run:
    """One agent run: its principal, its session and what it has used so far.

    Quotas count across a run; idempotency keys without declared fields are scoped to its session.
    """

    principal: Principal = field(default_factory=Principal)
    session_id: str | None = None
    deps: Any = None
    """Passed to tools through `ToolContext.deps`."""
    id: str = field(default_factory=_random_id)  # as secrets.token_hex(16), without a system call a run
    started_at: float | None = None
    """`time.monotonic()` when the first call reached the quota guard."""
    max_calls: int | None = None
    """Calls this run may make on top of `Policy.max_calls_per_run` (the lower applies), e.g. an agent's
    `Limits.max_tool_calls`; calls beyond it are refused with `QUOTA_EXCEEDED`."""
    calls: int = 0
    output_bytes: int = 0
    records: list[ToolCallRecord] = field(default_factory=_no_records)
    """Kalygo's `{toolType, toolName, input, output}` record of every call that ran (seed 004)."""

    def elapsed_s(self) -> float:
        return 0.0 if self.started_at is None else time.monotonic() - self.started_at
