"""The journal's write path (SQLite's raw writer, PostgreSQL's psycopg pipelines): tokens taken with the
writes that start calls, batches, and writes the database refuses."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tether.store import JournalEntry, Lookup, SqlJournal
from tether.store.internal import RateLimited, RateToken, Write
from tether.types import RateLimit

OpenJournal = Callable[[str], SqlJournal]


def entry(call_id: str, key: str | None = None, kind: str = "intent") -> JournalEntry:
    return JournalEntry(
        kind=kind,  # pyright: ignore[reportArgumentType]
        call_id=call_id,
        tool="book",
        created_at=time.time(),
        idempotency_key=key,
        side_effects="mutating",
        arguments={"room": call_id},
    )


def test_a_batch_takes_tokens_from_a_new_bucket_and_refuses_past_the_limit(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    journal.rate_limits  # noqa: B018 - the buckets' table is made on first use
    token = RateToken("book:u1", RateLimit(calls=2, per_seconds=3600))
    results = journal.write_batch(
        [
            Write(entry("c1"), take=token),  # the bucket does not exist yet
            Write(entry("c2", key="k2"), claim=True, take=token),
            Write(entry("c3", key="k3"), claim=True, take=token),  # no token left
            Write(entry("c4"), take=token),
            Write(entry("c5")),  # no token wanted
        ]
    )
    assert [type(r).__name__ for r in results] == [
        "JournalEntry",
        "Lookup",
        "RateLimited",
        "RateLimited",
        "JournalEntry",
    ]
    assert results[1] == Lookup("new")
    # one commit for the batch; a write that needed more (a new bucket) may get a later id than the others
    assert sorted(e.call_id for e in journal.entries()) == ["c1", "c2", "c5"]
    assert journal.lookup("k3") == Lookup("new")  # refused: nothing written


def test_a_claim_of_a_key_with_an_intent_finishes_under_its_lock_without_a_second_token(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    journal.rate_limits  # noqa: B018
    token = RateToken("book:u1", RateLimit(calls=3, per_seconds=3600))
    first = entry("c1", key="k")
    assert journal.claim(first, take=token) == Lookup("new")
    again = entry("c1", key="k")
    found = journal.claim(again, take=token)  # in doubt and mutating: not run again; its token is spent
    assert (found.status, again.id) == ("in_doubt", None)
    assert journal.claim(entry("c2", key="other"), take=token).status == "new"  # the third: none is left
    with pytest.raises(RateLimited):
        journal.claim(entry("c3", key="third"), take=token)
    assert journal.lookup("third") == Lookup("new")


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # SQLite stores text of any length
def test_a_write_the_database_refuses_writes_nothing_and_the_next_goes_through(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    journal.rate_limits  # noqa: B018
    token = RateToken("book:u1", RateLimit(calls=1, per_seconds=3600))
    too_long = entry("c" * 300, key="k1")  # the column holds 256 characters
    with pytest.raises(Exception, match="too long"):
        journal.claim(too_long, take=token)
    with pytest.raises(Exception, match="too long"):
        journal.append(entry("c" * 300))
    assert journal.claim(entry("c2", key="k2"), take=token) == Lookup("new")  # the token was not spent
    assert [e.call_id for e in journal.entries()] == ["c2"]
