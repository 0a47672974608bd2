"""The journal's vocabulary: one `JournalEntry` per row, and the answer to an idempotency `Lookup`."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

__all__ = [
    "DEFAULT_URL",
    "ENTRY_FIELDS",
    "EntryKind",
    "JournalEntry",
    "Lookup",
    "Outcome",
    "OutcomeUnknown",
    "WouldWait",
]

DEFAULT_URL = "sqlite:///tether-journal.db"
"""Where `SqlJournal` and `tether audit` keep the journal unless told otherwise: a file in the working dir."""

EntryKind = Literal["intent", "result", "refusal", "resolution"]
"""`intent` before a tool runs, `result` after; `refusal` for a call a guard stopped; `resolution` settles
an intent left in doubt by a crash."""

Outcome = Literal["ok", "needs", "error"]


class WouldWait(Exception):
    """A write tried with `wait=False` would have had to wait (for the database's write lock, or for I/O):
    nothing was written; do it again with `wait=True` where blocking is fine (a worker thread)."""


class OutcomeUnknown(Exception):
    """A journal write failed at or after its `COMMIT` (the connection lost once the `COMMIT` was sent; an
    error SQLite reported for a commit it ended anyway): it may or may not have been written. It must not be
    written again, which could record it twice (two intents for one call, a key claimed twice); its call is
    in doubt, as after a crash, until resolved. Any other exception from a write means nothing was written.
    """


@dataclass(slots=True)
class JournalEntry:
    """One append-only row of the journal. Arguments and envelopes are stored redacted, as JSON values.

    Not frozen only so that `Journal.append` can set `id` without copying; treat entries as values.
    """

    kind: EntryKind
    call_id: str
    tool: str
    created_at: float
    """Seconds since the epoch."""
    id: int | None = None
    """Assigned by the journal when the entry is appended."""
    intent_id: int | None = None
    """For results and resolutions: the intent they complete."""
    session_id: str | None = None
    run_id: str | None = None
    idempotency_key: str | None = None
    side_effects: str | None = None
    principal: str | None = None
    why: str | None = None
    arguments: dict[str, Any] | None = None
    annotations: tuple[str, ...] = ()
    repairs: tuple[dict[str, Any], ...] = ()
    repaired: bool = False
    outcome: Outcome | None = None
    error_code: str | None = None
    envelope: dict[str, Any] | None = None
    duration_ms: float | None = None
    traceback: str | None = None
    """The full traceback of an `INTERNAL` failure, which the model never sees."""
    pid: int | None = None
    host: str | None = None
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """Room for facts without a column of their own."""


ENTRY_FIELDS = tuple(f.name for f in fields(JournalEntry))


@dataclass(frozen=True, slots=True)
class Lookup:
    """What the journal knows about an idempotency key."""

    status: Literal["new", "done", "in_doubt"]
    """`new`: never ran (or resolved as not run); `done`: has a result; `in_doubt`: an intent without one."""
    intent: JournalEntry | None = None
    envelope: dict[str, Any] | None = None
    """The recorded result, for `done`."""
