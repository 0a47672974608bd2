"""PostgreSQL writes from the event loop: a connection of the loop's own, no worker thread, same guarantees."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import pytest

from tether.execution import Executor, Principal, Run
from tether.store import JournalEntry, Lookup, SqlJournal
from tether.store.internal import RateLimited, RateToken
from tether.tools import Toolset, tool
from tether.types import RateLimit, ToolCall

OpenJournal = Callable[[str], SqlJournal]
pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)

CALLER = Run(principal=Principal("u1", frozenset({"math"})), session_id="s")


@tool(side_effects="idempotent", rate_limit=RateLimit(calls=1000, per_seconds=1), scopes=("math",))
async def add(a: int, b: int) -> int:
    return a + b


def entry(call_id: str, key: str | None = None, kind: Any = "intent") -> JournalEntry:
    return JournalEntry(
        kind=kind,
        call_id=call_id,
        tool="add",
        created_at=time.time(),
        idempotency_key=key,
        side_effects="mutating",
    )


@pytest.mark.anyio
async def test_a_call_writes_its_token_intent_and_result_from_the_event_loop(
    journal_url: str, open_journal: OpenJournal, monkeypatch: pytest.MonkeyPatch
) -> None:
    hops: list[object] = []
    real = anyio.to_thread.run_sync

    async def counted(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(function)
        return await real(function, *args, **kwargs)

    journal = open_journal(journal_url)
    assert journal.writes_async
    journal.rate_limits.take("add u1", RateLimit(calls=1000, per_seconds=1))  # the bucket exists
    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    executor = Executor(Toolset(add), journal=journal)
    first = await executor.execute(ToolCall(id="c0", name="add", arguments={"a": 1, "b": 1}), CALLER)
    assert first.ok
    assert hops  # the loop had no connection: the writes went to a thread while it was made beside
    await journal.append_async(entry("warm"))  # waits for that connection (it holds the same lock)
    hops.clear()
    envelope = await executor.execute(ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3}), CALLER)
    assert envelope.ok
    assert hops == []  # the token and the intent in one round trip, the result in another: no thread
    assert [(e.call_id, e.kind, e.outcome) for e in open_journal(journal_url).entries()][-2:] == [
        ("c1", "intent", None),
        ("c1", "result", "ok"),
    ]
    again = await executor.execute(ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3}), CALLER)
    assert again == envelope  # a repeat is answered from the journal
    assert len(journal.entries()) == 5
    assert len(hops) == 1  # a key with an intent: the claim's second transaction, in a thread as before


def test_each_event_loop_in_turn_gets_a_connection_and_claims_stay_exact(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    first = entry("c1", key="k")

    async def claim(intent: JournalEntry) -> Lookup:
        return await journal.claim_async(intent)

    assert anyio.run(claim, first) == Lookup("new")  # one loop, then another: a new connection each
    again = entry("c1", key="k")
    found = anyio.run(claim, again)
    assert (found.status, again.id) == ("in_doubt", None)  # the first loop's intent, committed
    result = entry("c1", kind="result")
    result.intent_id, result.outcome, result.envelope = first.id, "ok", {"ok": True, "data": 5}

    async def append() -> JournalEntry:
        return await journal.append_async(result)

    anyio.run(append)
    assert anyio.run(claim, entry("c1", key="k")).status == "done"
    assert [e.kind for e in journal.entries()] == ["intent", "result"]


@pytest.mark.anyio
async def test_a_token_refused_from_the_event_loop_writes_nothing(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    journal.rate_limits  # noqa: B018 (its table is made on first use)
    token = RateToken("add:u1", RateLimit(calls=2, per_seconds=3600))
    assert (await journal.claim_async(entry("c1", key="k1"), take=token)).status == "new"  # the bucket made
    assert (await journal.claim_async(entry("c2", key="k2"), take=token)).status == "new"  # the fast path
    with pytest.raises(RateLimited):
        await journal.claim_async(entry("c3", key="k3"), take=token)
    with pytest.raises(RateLimited):
        await journal.append_async(entry("c4"), take=token)
    assert [e.call_id for e in journal.entries()] == ["c1", "c2"]
    assert journal.lookup("k3") == Lookup("new")


@pytest.mark.anyio
async def test_a_write_cancelled_part_way_is_all_or_nothing_and_the_next_goes_through(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    await journal.append_async(entry("c0"))  # connected
    for number in range(1, 6):  # cancelled at each of its first few waits in turn
        intent = entry(f"c{number}", key=f"k{number}")
        with anyio.CancelScope() as scope:
            scope.cancel()  # at the write's first wait
            await journal.claim_async(intent)
        committed = [e.call_id for e in journal.entries()]
        assert (f"c{number}" in committed) == (intent.id is not None)
    after = entry("c9", key="k9")
    assert (await journal.claim_async(after)).status == "new"
    assert after.id is not None
