"""Who "Aviad" is: the counterpart resolved on the server, among the user's own connections only (seed 002:
the model names people, it never supplies their ids)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from tether.exceptions import NeedsInput, ToolError
from tether.packs.perin._network import Connection
from tether.types import ErrorCode

__all__ = ["resolve_counterpart"]

_CLOSE = 0.8
"""How alike a name must be to count as a match (a typo, a missing letter), as `difflib` measures it."""
_HINT = 0.6
"""How alike a name must be to be suggested when nothing matches."""


def resolve_counterpart(reference: str, connections: Sequence[Connection]) -> Connection:
    """The active connection `reference` (a name or an email) means.

    Raises:
        NeedsInput: Several active connections match: `counterpart` asks which, naming each one.
        ToolError: `CONNECTION_INACTIVE` if only an inactive connection matches, `NOT_FOUND` if none does.
    """
    wanted = " ".join(reference.lower().split())
    matches = [c for c in connections if _matches(wanted, c)]
    active = sorted((c for c in matches if c.status == "active"), key=lambda c: c.counterpart.name)
    if len(active) == 1:
        return active[0]
    if len(active) > 1:
        people = " or ".join(f"{c.counterpart.name} ({c.counterpart.email})" for c in active)
        raise NeedsInput(counterpart=f"Which {reference.strip()} do you mean: {people}?")
    if matches:
        person = matches[0].counterpart.name
        raise ToolError(
            ErrorCode.CONNECTION_INACTIVE,
            f"Your connection with {person} is {matches[0].status}, so Perin cannot schedule with them.",
            recoverable=False,
            suggestion=f"Tell the user the connection with {person} must be active again before scheduling.",
        )
    close = sorted(
        c.counterpart.name for c in connections if c.status == "active" and _likeness(wanted, c) >= _HINT
    )
    hint = f"Did they mean {' or '.join(close)}? " if close else ""
    raise ToolError(
        ErrorCode.NOT_FOUND,
        f"No one called {reference.strip()!r} is among the user's connections.",
        suggestion=f"{hint}Ask the user for the person's full name or email; do not guess an id.",
    )


def _likeness(wanted: str, connection: Connection) -> float:
    name = " ".join(connection.counterpart.name.lower().split())
    return max(difflib.SequenceMatcher(None, wanted, part).ratio() for part in [name, *name.split()])


def _matches(wanted: str, connection: Connection) -> bool:
    person = connection.counterpart
    name = " ".join(person.name.lower().split())
    if wanted in (person.email, name) or wanted == person.email.split("@")[0]:
        return True
    if "@" in wanted:
        return False  # an email matches exactly or not at all
    parts = name.split()
    if wanted in parts or (len(wanted.split()) > 1 and name.startswith(wanted)):
        return True
    return _likeness(wanted, connection) >= _CLOSE
