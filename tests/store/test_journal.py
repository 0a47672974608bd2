"""`MemoryJournal`: ids, lookups and a bounded size."""

from __future__ import annotations

from tether.store import JournalEntry, Lookup, MemoryJournal


def intent(key: str) -> JournalEntry:
    return JournalEntry(kind="intent", call_id=key, tool="t", created_at=0.0, idempotency_key=key)


def result(of: JournalEntry) -> JournalEntry:
    return JournalEntry(
        kind="result", call_id=of.call_id, tool="t", created_at=0.0, intent_id=of.id, envelope={}
    )


def test_entries_get_increasing_ids_and_can_be_found() -> None:
    journal = MemoryJournal()
    first = journal.append(intent("a"))
    done = journal.append(result(first))
    assert (first.id, done.id) == (1, 2)
    assert journal.entry(2) is done
    assert journal.entries(since_id=1) == [done]
    assert journal.lookup("a") == Lookup("done", first, {})


def test_the_oldest_entries_are_forgotten_beyond_the_limit() -> None:
    journal = MemoryJournal(max_entries=4)
    for key in "abc":
        journal.append(result(journal.append(intent(key))))
    assert [e.id for e in journal.entries()] == [3, 4, 5, 6]
    assert journal.lookup("a") == Lookup("new")
    assert journal.lookup("c").status == "done"
    assert journal.entry(1) is None
    assert journal.entry(6) is not None
