"""Who is calling (`Principal`) and the run that quotas, records and idempotency keys belong to (`Run`)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from tether.tools import SecretText
from tether.types import ToolCallRecord

__all__ = ["Principal", "Run"]


class _RandomIds:
    """Random ids from the OS's generator, read 4 KiB at a time: a `getrandom` system call a run costs ~2.5
    µs on a busy VM. A forked child starts afresh (it must not repeat its parent's ids).

    A block's 256 ids are cut once, as hex, into a list that each id pops (atomic, without a lock: ~0.2 µs
    a run); a caller that finds it empty reads a new block. Two threads may both find it empty: each then
    pops from its own new list, and the other list's ids are dropped unused, so no id repeats. `Run`'s
    default factory is the bound method (calling an instance goes through its type's `__call__` slot, ~0.7k
    instructions more)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        """The current block's ids not yet given out."""
        os.register_at_fork(after_in_child=self.forget)

    def forget(self) -> None:
        self.ids = []

    def next_id(self) -> str:
        try:
            return self.ids.pop()
        except IndexError:
            hexed = os.urandom(4096).hex()
            ids = self.ids = [hexed[at : at + 32] for at in range(0, 8192, 32)]
            return ids.pop()


_random_id = _RandomIds().next_id


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
    secrets: SecretText | None = None
    """The secret values the run knows so far: given to it (an agent's run: `Session.secrets`), and learned
    as it goes from what a tool's schemas mark secret in a call or a result (`known_secrets`). The journal
    and the records of every call of the run, to any tool, have each of them redacted wherever it is echoed
    (docs/sessions.md); None until there is one (a run without secrets pays a check a call)."""

    def known_secrets(self) -> SecretText:
        """`secrets`, made on first use."""
        known = self.secrets
        if known is None:
            known = self.secrets = SecretText()
        return known

    def elapsed_s(self) -> float:
        return 0.0 if self.started_at is None else time.monotonic() - self.started_at
