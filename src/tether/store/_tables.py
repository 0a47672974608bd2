"""The journal's one table (SQLAlchemy Core). Rows are only ever inserted, never updated or deleted."""

from __future__ import annotations

from sqlalchemy import JSON, BigInteger, Boolean, Column, Float, Index, Integer, MetaData, String, Table, Text

__all__ = ["journal_table", "metadata"]

metadata = MetaData()

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
    Index("ix_tether_journal_key", "idempotency_key", "id"),
    Index("ix_tether_journal_intent", "intent_id"),
    Index("ix_tether_journal_call", "call_id"),
)
