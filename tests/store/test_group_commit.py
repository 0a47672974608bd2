"""Group commit: calls that overlap share their journal transactions, with every guarantee of a write alone."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from tether.execution import Executor, Policy, Run
from tether.store import JournalEntry, Lookup, SqlJournal
from tether.store.internal import Write
from tether.tools import Toolset, tool
from tether.types import OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

OpenJournal = Callable[[str], SqlJournal]


@tool(side_effects="mutating")
async def nap(n: int) -> int:
    await anyio.sleep(0.01)
    return n


def naps(count: int) -> list[ToolCall]:
    return [ToolCall(id=f"n{i}", name="nap", arguments={"n": i}) for i in range(count)]


def count_commits(journal: SqlJournal) -> list[int]:
    """Commits on the SQLite journal's writing connections (a lone statement counts as one)."""
    counted = [0]
    writer: Any = getattr(journal, "_writer")  # noqa: B009 - the test watches the writer's connections

    def trace(sql: str) -> None:
        text = sql.upper()
        if text == "COMMIT" or (text.startswith("INSERT") and not in_transaction[0]):
            counted[0] += 1
        in_transaction[0] = text.startswith("BEGIN") or (in_transaction[0] and text != "COMMIT")

    in_transaction = [False]
    for name in ("_connection", "_now"):
        connection = getattr(writer, name)
        if connection is not None:
            connection.set_trace_callback(trace)
    return counted


@pytest.mark.parametrize("durable", [False, True], ids=["inline", "durable"])
async def test_fifty_concurrent_calls_commit_in_a_few_transactions(tmp_path: Path, durable: bool) -> None:
    # durable: synchronous=FULL, every write from a worker thread, an fsync a commit shared by the batch
    journal = SqlJournal(f"sqlite:///{tmp_path / 'journal.db'}", durable=durable)
    commits = count_commits(journal)
    executor = Executor(Toolset(nap), journal=journal, policy=Policy(max_concurrency=50))
    answers = await executor.execute_all(naps(50), Run(session_id="s"))
    assert answers == [OkEnvelope(data=i) for i in range(50)]
    assert commits[0] <= 10  # 100 alone: an intent and a result a call
    entries = journal.entries()
    intents = {e.id: e for e in entries if e.kind == "intent"}
    results = [e for e in entries if e.kind == "result"]
    assert len(intents) == len(results) == 50
    assert all(r.intent_id in intents and (r.id or 0) > (r.intent_id or 0) for r in results)
    assert await executor.in_doubt() == []
    journal.close()


class RefusesBatches(SqlJournal):
    """A journal whose database refuses the first batch: each write must then go through on its own."""

    refused = 0

    def write_batch(
        self, writes: Sequence[Write], *, wait: bool = True
    ) -> list[Lookup | JournalEntry | Exception]:
        if not self.refused:
            self.refused += 1
            for write in writes:  # as inserts the rollback undid leave them
                write.entry.id = 10**6 + self.refused
            raise sqlite3.OperationalError("disk I/O error")
        return super().write_batch(writes, wait=wait)

    async def write_batch_async(
        self, writes: Sequence[Write], *, connect: bool = True
    ) -> list[Lookup | JournalEntry | Exception]:
        if not self.refused:  # PostgreSQL's batch from the event loop is refused the same way
            return self.write_batch(writes)
        return await super().write_batch_async(writes, connect=connect)


async def test_a_batch_the_database_refuses_is_written_one_by_one(journal_url: str) -> None:
    journal = RefusesBatches(journal_url)
    try:
        executor = Executor(Toolset(nap), journal=journal, policy=Policy(max_concurrency=10))
        answers = await executor.execute_all(naps(10), Run(session_id="s"))
        assert answers == [OkEnvelope(data=i) for i in range(10)]
        assert journal.refused == 1
        entries = journal.entries()
        assert sorted(e.call_id for e in entries if e.kind == "intent") == sorted(f"n{i}" for i in range(10))
        intents = {e.id for e in entries if e.kind == "intent"}
        assert {e.intent_id for e in entries if e.kind == "result"} == intents
    finally:
        journal.close()
