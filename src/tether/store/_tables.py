"""The journal's one table (SQLAlchemy Core). Rows are only ever inserted, never updated or deleted.

Its indexes are partial, so that each insert updates as few of them as its queries need (on SQLite every
index an insert touches is one more page written to the WAL at commit, ~5-8 µs): intents by idempotency key
(the claim's lookup), completions (results, resolutions) by their intent, and calls by id only where a
call's entries start (intents and refusals: `SqlJournal.entries(call_id=...)` finds the rest through
`intent_id`). A query must state the index's condition as written (`kind = 'intent'`, not a bound
parameter) for SQLite's and PostgreSQL's planners to use it.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    text,
)

__all__ = ["INTENT", "STARTS_CALL", "journal_table", "metadata", "replaced_indexes"]

metadata = MetaData()

INTENT = "kind = 'intent'"
STARTS_CALL = "intent_id IS NULL"
"""Entries that start a call (intents, refusals); results and resolutions name their intent instead."""
_COMPLETED = "intent_id IS NOT NULL"

_ID = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements only INTEGER PRIMARY KEY

journal_table = Table(
    "tether_journal",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("intent_id", _ID, nullable=True),
    Column("call_id", String(256), nullable=False),
    Column("tool", String(256), nullable=False),
    Column("session_id", String(256)),
    Column("run_id", String(64)),
    Column("idempotency_key", String(64)),
    Column("side_effects", String(16)),
    Column("principal", String(256)),
    Column("why", Text),
    Column("arguments", JSON),
    Column("annotations", JSON),
    Column("repairs", JSON),
    Column("repaired", Boolean, nullable=False, default=False),
    Column("outcome", String(8)),
    Column("error_code", String(64)),
    Column("envelope", JSON),
    Column("duration_ms", Float),
    Column("traceback", Text),
    Column("pid", Integer),
    Column("host", String(256)),
    Column("note", Text),
    Column("extra", JSON),
    Index(
        "ix_tether_journal_intents",
        "idempotency_key",
        "id",
        sqlite_where=text(INTENT),
        postgresql_where=text(INTENT),
    ),
    Index(
        "ix_tether_journal_completions",
        "intent_id",
        sqlite_where=text(_COMPLETED),
        postgresql_where=text(_COMPLETED),
    ),
    Index(
        "ix_tether_journal_calls",
        "call_id",
        sqlite_where=text(STARTS_CALL),
        postgresql_where=text(STARTS_CALL),
    ),
)

replaced_indexes = ("ix_tether_journal_key", "ix_tether_journal_intent", "ix_tether_journal_call")
"""Full indexes of earlier versions, which the partial ones above replace: dropped when a journal opens."""
