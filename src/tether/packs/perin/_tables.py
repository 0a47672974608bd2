"""The network's tables, beside the journal's in the same database (SQLite by default, PostgreSQL by URL).

Times are whole UTC seconds since the epoch: every database compares integers the same way, whereas
SQLite keeps no time zone with a timestamp. Scopes are kept space-separated, as OAuth writes them.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, ForeignKey, Index, Integer, MetaData, String, Table, Text

__all__ = [
    "audit",
    "connections",
    "events",
    "metadata",
    "notifications",
    "sessions",
    "transcript",
    "users",
]

metadata = MetaData()

users = Table(
    "perin_users",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("name", Text, nullable=False),
    Column("email", String(320), nullable=False, unique=True),
    Column("timezone", String(64), nullable=False),
    Column("work_start_min", Integer, nullable=False),
    Column("work_end_min", Integer, nullable=False),
    Column("calendar_version", Integer, nullable=False, default=0),
    # bumped first by every transaction that books on this user's calendar: on PostgreSQL the row lock, on
    # SQLite the write lock it takes, serialise bookings of one calendar across processes
)

connections = Table(
    "perin_connections",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("user_id", String(32), ForeignKey("perin_users.id"), nullable=False),
    Column("counterpart_id", String(32), ForeignKey("perin_users.id"), nullable=False),
    Column("status", String(16), nullable=False),
    Column("scopes", Text, nullable=False),
    Index("perin_connections_pair", "user_id", "counterpart_id", unique=True),
)
"""One row per direction: what `counterpart_id` lets `user_id` do with their calendar."""

events = Table(
    "perin_events",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("user_id", String(32), ForeignKey("perin_users.id"), nullable=False),
    Column("start_s", BigInteger, nullable=False),
    Column("end_s", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),  # busy | hold | confirmed
    Column("title", Text, nullable=False),
    Column("session_id", String(32)),
    Index("perin_events_user_time", "user_id", "start_s"),
)

sessions = Table(
    "perin_sessions",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("initiator_id", String(32), ForeignKey("perin_users.id"), nullable=False),
    Column("counterpart_id", String(32), ForeignKey("perin_users.id"), nullable=False),
    Column("connection_id", String(32), ForeignKey("perin_connections.id"), nullable=False),
    Column("duration_mins", Integer, nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("proposals", Text, nullable=False),  # JSON: [[start_s, end_s], ...]
    Column("status", String(16), nullable=False),  # proposed | confirming | confirmed
    Column("created_s", BigInteger, nullable=False),
    Column("booked_start_s", BigInteger),
    Column("booked_end_s", BigInteger),
    Column("confirmed_s", BigInteger),
)

transcript = Table(
    "perin_transcript",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(32), ForeignKey("perin_sessions.id"), nullable=False),
    Column("at_s", BigInteger, nullable=False),
    Column("actor_id", String(32), nullable=False),
    Column("text", Text, nullable=False),
)

notifications = Table(
    "perin_notifications",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),  # the order they were made in
    Column("id", String(32), nullable=False, unique=True),
    Column("user_id", String(32), ForeignKey("perin_users.id"), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("message", Text, nullable=False),
    Column("session_id", String(32)),
    Column("actionable", Boolean, nullable=False),
    Column("resolved", Boolean, nullable=False, default=False),
    Column("created_s", BigInteger, nullable=False),
    Index("perin_notifications_user", "user_id", "resolved"),
)

audit = Table(
    "perin_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at_s", BigInteger, nullable=False),
    Column("user_id", String(32), nullable=False),
    Column("action", String(48), nullable=False),
    Column("outcome", String(48), nullable=False),
    Column("detail", Text, nullable=False),  # JSON
)
