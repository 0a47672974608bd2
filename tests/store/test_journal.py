"""`MemoryJournal`: ids, lookups and a bounded size."""

from __future__ import annotations

import random

import pytest

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


def in_doubt_by_definition(journal: MemoryJournal) -> list[JournalEntry]:
    """Intents the journal keeps with neither a result nor a resolution among the entries it keeps."""
    kept = journal.entries()
    completed = {e.intent_id for e in kept if e.kind in ("result", "resolution")}
    return [e for e in kept if e.kind == "intent" and e.id not in completed]


def lookup_by_definition(journal: MemoryJournal, key: str) -> Lookup:
    kept = journal.entries()
    intents = [e for e in kept if e.kind == "intent" and e.idempotency_key == key]
    if not intents:
        return Lookup("new")
    latest = intents[-1]
    completions = [e for e in kept if e.kind in ("result", "resolution") and e.intent_id == latest.id]
    if not completions:
        return Lookup("in_doubt", latest)
    last = completions[-1]
    if last.kind == "resolution" and last.envelope is None:
        return Lookup("new", latest)
    return Lookup("done", latest, last.envelope)


@pytest.mark.parametrize("seed", range(20))
def test_in_doubt_and_lookup_answer_what_the_kept_entries_say(seed: int) -> None:
    """The journal's indexes (open intents; completions of keyed ones) agree with its entries, through
    keyed and unkeyed calls, results with or without their intent's key, resolutions, intents left open,
    and the oldest entries forgotten."""
    rng = random.Random(seed)
    journal = MemoryJournal(max_entries=rng.choice([5, 12, 1000]))
    open_intents: list[JournalEntry] = []
    for step in range(200):
        action = rng.random()
        if action < 0.45 or not open_intents:
            key = rng.choice([None, "a", "b", "c", f"k{step}"])
            made = JournalEntry(
                kind="intent", call_id=f"c{step}", tool="t", created_at=0.0, idempotency_key=key
            )
            open_intents.append(journal.append(made))
        else:
            of = open_intents.pop(rng.randrange(len(open_intents)))
            kind = "result" if action < 0.85 else "resolution"
            envelope = (
                rng.choice([{"ok": True, "data": step}, None]) if kind == "resolution" else {"ok": True}
            )
            key = of.idempotency_key if rng.random() < 0.7 else None  # a result may not repeat the key
            journal.append(
                JournalEntry(
                    kind=kind,
                    call_id=of.call_id,
                    tool="t",
                    created_at=0.0,
                    intent_id=of.id,
                    idempotency_key=key,
                    envelope=envelope,
                )
            )
        if rng.random() < 0.1:
            journal.append(JournalEntry(kind="refusal", call_id=f"r{step}", tool="t", created_at=0.0))
        assert journal.in_doubt() == in_doubt_by_definition(journal)
        for key in ("a", "b", "c", f"k{step}"):
            assert journal.lookup(key) == lookup_by_definition(journal, key)


def completion_of(intent: JournalEntry, step: int) -> JournalEntry:
    """A result as the executor makes one: its intent's columns, and what changes (here the step)."""
    return JournalEntry(
        kind="result",
        call_id=intent.call_id,
        tool="t",
        created_at=float(step),
        intent_id=intent.id,
        idempotency_key=intent.idempotency_key,
        envelope={"ok": True, "data": step},
    )


@pytest.mark.parametrize("seed", range(10))
def test_entries_complete_leaves_to_make_are_those_append_would_have_kept(seed: int) -> None:
    """`complete` keeps `make(*arguments)` unmade until it is read: lookups, in-doubt intents, ids, bounded
    size and every entry read back are what appending it made would give; each read makes it at most once,
    and every later read returns that same object (the executor relies on nothing more)."""
    rng = random.Random(seed)
    size = rng.choice([5, 12, 1000])
    eager, later = MemoryJournal(max_entries=size), MemoryJournal(max_entries=size)
    open_intents: list[tuple[JournalEntry, JournalEntry]] = []
    made: list[int] = []  # the step of each entry made

    def make(intent: JournalEntry, step: int) -> JournalEntry:
        made.append(step)
        return completion_of(intent, step)

    for step in range(150):
        if rng.random() < 0.5 or not open_intents:
            key = rng.choice([None, "a", "b", f"k{step}"])
            pair = tuple(
                j.append(
                    JournalEntry(
                        kind="intent", call_id=f"c{step}", tool="t", created_at=0.0, idempotency_key=key
                    )
                )
                for j in (eager, later)
            )
            open_intents.append((pair[0], pair[1]))
        else:
            first, second = open_intents.pop(rng.randrange(len(open_intents)))
            done = eager.append(completion_of(first, step))
            assert later.complete(second, make, (second, step)) == done.id
        for key in ("a", "b", f"k{step}"):
            assert later.lookup(key) == eager.lookup(key)
        assert later.in_doubt() == eager.in_doubt()
        if rng.random() < 0.05:  # all made now, some results still to come
            assert later.entries() == eager.entries()
        if rng.random() < 0.2:
            some = rng.randrange(1, step + 3)
            assert later.entry(some) == eager.entry(some)
            assert later.entry(some) is later.entry(some)
    assert later.entries() == eager.entries()
    first_read, second_read = later.entries(), later.entries()
    assert all(a is b for a, b in zip(first_read, second_read, strict=True))
    assert len(made) == len(set(made))  # each made once: reads after the first find it made
    assert all(later.entry(e.id or 0) is e for e in first_read)
