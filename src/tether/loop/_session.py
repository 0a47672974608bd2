"""A conversation that outlives one run."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.types import Message

if TYPE_CHECKING:  # SQLAlchemy loads only when a store is used
    from tether.store import SessionStore

__all__ = ["Session"]


@dataclass
class Session:
    """A conversation; with a `store`, every message is saved as it happens and `Session.open` reloads it.

    Use the journal's database for the store (`SessionStore(journal.engine)`) and give the agent's executor
    that journal: then `Agent.resume(session)` after a crash answers completed calls from the journal.
    """

    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    store: SessionStore | None = None
    messages: list[Message] = field(default_factory=list[Message])
    secrets: set[str] = field(default_factory=set[str])
    """Text the user gave that must not be written to the store in clear (a password answering a tool's
    `needs`): a run stores and shows (in its events) each occurrence as `***`, as it does the values a tool's
    schema marks secret. The conversation in memory keeps it, so the model can use it during the run."""

    @classmethod
    def open(cls, session_id: str, store: SessionStore) -> Session:
        """The stored session `session_id` (empty if new)."""
        return cls(session_id, store, store.load(session_id))
