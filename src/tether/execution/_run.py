"""Who is calling (`Principal`) and the run that quotas, records and idempotency keys belong to (`Run`)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tether.types import ToolCallRecord

__all__ = ["Principal", "Run"]


class _RandomIds:
    """Random ids from the OS's generator, read 4 KiB at a time: a `getrandom` system call a run costs ~2.5
    µs on a busy VM. A forked child starts afresh (it must not repeat its parent's ids)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pool = b""
        self.at = 0
        os.register_at_fork(after_in_child=self.forget)

    def forget(self) -> None:
        self.pool, self.at = b"", 0

    def __call__(self) -> str:
        with self.lock:
            at = self.at
            if at + 16 > len(self.pool):
                self.pool, at = os.urandom(4096), 0
            self.at = at + 16
            return self.pool[at : at + 16].hex()


_random_id = _RandomIds()


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
    records: list[ToolCallRecord] = field(default_factory=list[ToolCallRecord])
    """Kalygo's `{toolType, toolName, input, output}` record of every call that ran (seed 004)."""

    def elapsed_s(self) -> float:
        return 0.0 if self.started_at is None else time.monotonic() - self.started_at
