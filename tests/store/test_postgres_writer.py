"""PostgreSQL writes from the event loop: one connection, kept from loop to loop, no worker thread, same
guarantees."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import pytest

from tether.execution import Executor, Policy, Principal, Run
from tether.store import JournalEntry, Lookup, SqlJournal, WouldWait
from tether.store.internal import RateLimited, RateToken
from tether.tools import Toolset, tool
from tether.types import OkEnvelope, RateLimit, ToolCall

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


def backend(journal: SqlJournal) -> int:
    """The server process behind the journal's event-loop connection."""
    writer: Any = getattr(journal, "_pg_writer")  # noqa: B009 - the test watches the writer's connection
    return writer._async.info.backend_pid


def test_each_event_loop_in_turn_keeps_the_connection_and_claims_stay_exact(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    first = entry("c1", key="k")

    async def claim(intent: JournalEntry) -> Lookup:
        return await journal.claim_async(intent)

    assert anyio.run(claim, first) == Lookup("new")
    pid = backend(journal)
    again = entry("c1", key="k")
    found = anyio.run(claim, again)  # another loop: the connection the first one left idle, not a new one
    assert backend(journal) == pid
    assert (found.status, again.id) == ("in_doubt", None)  # the first loop's intent, committed
    result = entry("c1", kind="result")
    result.intent_id, result.outcome, result.envelope = first.id, "ok", {"ok": True, "data": 5}

    async def append() -> JournalEntry:
        return await journal.append_async(result)

    anyio.run(append)
    assert anyio.run(claim, entry("c1", key="k")).status == "done"
    assert [e.kind for e in journal.entries()] == ["intent", "result"]
    assert backend(journal) == pid


def test_a_connection_a_loop_left_in_a_transaction_is_dropped_and_the_transaction_rolled_back(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    writer: Any = getattr(journal, "_pg_writer")  # noqa: B009 - the test leaves the writer's connection busy

    async def left_part_way() -> None:  # as a loop stopped from outside in the middle of a write leaves it
        await journal.append_async(entry("c0"))
        await writer._async.execute("BEGIN")
        await writer._async.execute(
            "INSERT INTO tether_journal (kind, call_id, tool, created_at, repaired) "
            "VALUES ('intent', 'ghost', 'add', 0, false)"
        )

    anyio.run(left_part_way)
    pid = backend(journal)

    async def append() -> JournalEntry:
        return await journal.append_async(entry("c1", kind="result"))

    anyio.run(append)
    assert backend(journal) != pid  # a new connection; the old one's transaction was rolled back
    assert [e.call_id for e in journal.entries()] == ["c0", "c1"]


@tool(side_effects="mutating")
async def nap(n: int) -> int:
    await anyio.sleep(0.01)
    return n


@pytest.mark.anyio
async def test_a_group_commit_goes_from_the_event_loop_with_no_thread(
    journal_url: str, open_journal: OpenJournal, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = open_journal(journal_url)
    await journal.append_async(entry("warm", kind="refusal"))  # the loop's connection is made
    batches: list[int] = []
    real_batch = journal.write_batch_async

    async def batch(writes: Any, **kwargs: Any) -> Any:
        batches.append(len(writes))
        return await real_batch(writes, **kwargs)

    monkeypatch.setattr(journal, "write_batch_async", batch)
    hops: list[object] = []
    real = anyio.to_thread.run_sync

    async def counted(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(function)
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    executor = Executor(Toolset(nap), journal=journal, policy=Policy(max_concurrency=20))
    calls = [ToolCall(id=f"n{i}", name="nap", arguments={"n": i}) for i in range(20)]
    answers = await executor.execute_all(calls, Run(session_id="s"))
    assert answers == [OkEnvelope(data=i) for i in range(20)]
    assert hops == []
    assert sum(batches) >= 30  # most of the 40 writes grouped, in a few transactions
    assert len(batches) <= 10
    entries = journal.entries()
    intents = {e.id: e for e in entries if e.kind == "intent"}
    assert len(intents) == sum(e.kind == "result" for e in entries) == 20
    assert all(e.intent_id in intents for e in entries if e.kind == "result")
    assert await executor.in_doubt() == []


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


@pytest.mark.anyio
async def test_a_connection_still_being_made_when_the_journal_closes_is_closed_not_leaked(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    writer = journal._pg_writer  # pyright: ignore[reportPrivateUsage] - the connection made beside is its own
    assert writer is not None
    with pytest.raises(WouldWait):  # no connection yet: one is made beside while writes go to threads
        await writer.append_async(entry("c1"), connect=False)
    connecting = writer._connecting  # pyright: ignore[reportPrivateUsage]
    assert connecting is not None
    assert not connecting.done()
    journal.close()
    await connecting
    assert writer._async is None  # pyright: ignore[reportPrivateUsage] - made after close, then closed
