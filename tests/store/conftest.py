"""Journal databases to test against: `database_url` (the root conftest) gives SQLite, then PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tether.store import SqlJournal


@pytest.fixture
def journal_url(database_url: str) -> str:
    """A URL for an empty journal database (`database_url`: SQLite, then the session's PostgreSQL)."""
    return database_url


@pytest.fixture
def open_journal() -> Iterator[Callable[[str], SqlJournal]]:
    """Opens `SqlJournal`s that are closed when the test ends."""
    opened: list[SqlJournal] = []

    def open_(url: str) -> SqlJournal:
        opened.append(SqlJournal(url))
        return opened[-1]

    yield open_
    for journal in opened:
        journal.close()
