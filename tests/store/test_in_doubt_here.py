"""A call this process left in doubt is in doubt for its repeats here too, as for any other process's.

A call whose journal write failed at its commit (`OutcomeUnknown`), or that was stopped part way, holds an
intent without a result: after a crash, or in another process, a repeat of it is refused as in doubt. A
repeat in the process that made the intent (by the same executor or another one on the same journal) must
be told the same, not that the call is still running (it never will finish); while the call really runs,
repeats are told to wait, and concurrent repeats never start it twice.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.to_thread
import pytest

from tether.execution import Allow, Attempt, Decision, Executor, Run
from tether.execution._guards import _idempotency
from tether.store import Journal, JournalEntry, Lookup, MemoryJournal, SqlJournal
from tether.store.internal import OutcomeUnknown, RateToken
from tether.tools import Toolset, tool
from tether.types import AnyEnvelope, ErrorEnvelope, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

OpenJournal = Callable[[str], SqlJournal]
Lost = Literal["result", "intent"]

CALL = ToolCall(id="c1", name="pay", arguments={"account": "A-1"}, why="Pay the invoice")
SESSION = "s1"


class LosesOneWrite(SqlJournal):
    """A real journal whose first write of a call's `lost` entry (its result, or the claim writing its
    intent) fails at its commit, as when the connection drops once `COMMIT` was sent: `OutcomeUnknown`, the
    entry written (`committed`) or not."""

    def __init__(self, url: str, *, lost: Lost, committed: bool):
        super().__init__(url)
        self.lost, self.committed, self.armed = lost, committed, True

    def _fails(self, entry: JournalEntry) -> bool:
        return self.armed and entry.kind == self.lost

    def _lose(self) -> None:
        self.armed = False
        raise OutcomeUnknown("the connection was lost after COMMIT was sent")

    def append(
        self, entry: JournalEntry, *, wait: bool = True, take: RateToken | None = None
    ) -> JournalEntry:
        if not self._fails(entry):
            return super().append(entry, wait=wait, take=take)
        if self.committed:
            super().append(entry, wait=wait, take=take)  # `WouldWait` here: nothing written, nothing lost
        self._lose()
        raise AssertionError("unreachable")

    async def append_async(
        self, entry: JournalEntry, *, take: RateToken | None = None, connect: bool = True
    ) -> JournalEntry:
        if not self._fails(entry):
            return await super().append_async(entry, take=take, connect=connect)
        if self.committed:
            await super().append_async(entry, take=take, connect=connect)
        self._lose()
        raise AssertionError("unreachable")

    def claim(self, intent: JournalEntry, *, wait: bool = True, take: RateToken | None = None) -> Lookup:
        if not self._fails(intent):
            return super().claim(intent, wait=wait, take=take)
        if self.committed:
            super().claim(intent, wait=wait, take=take)
        self._lose()
        raise AssertionError("unreachable")

    async def claim_async(
        self, intent: JournalEntry, *, take: RateToken | None = None, connect: bool = True
    ) -> Lookup:
        if not self._fails(intent):
            return await super().claim_async(intent, take=take, connect=connect)
        if self.committed:
            await super().claim_async(intent, take=take, connect=connect)
        self._lose()
        raise AssertionError("unreachable")


def paying(paid: list[str]) -> Toolset:
    @tool
    def pay(account: str) -> str:
        """Pays an invoice: mutating, never repeated blindly."""
        paid.append(account)
        return f"paid {account}"

    return Toolset(pay)


def assert_in_doubt(envelope: AnyEnvelope, intent_id: int | None) -> None:
    """`envelope` is the refusal of a repeat of a call in doubt (as after a crash): not to be retried."""
    assert isinstance(envelope, ErrorEnvelope), envelope
    assert envelope.error.code == "CONFLICT", envelope
    assert envelope.error.details == {"in_doubt": True, "intent_id": intent_id}
    assert not envelope.error.recoverable
    assert envelope.error.suggestion is not None
    assert envelope.error.suggestion.startswith("Do not retry.")


def assert_running(envelope: AnyEnvelope, where: str) -> None:
    """`envelope` tells a repeat of a call that is running to wait for it."""
    assert isinstance(envelope, ErrorEnvelope), envelope
    assert envelope.error.code == "CONFLICT", envelope
    assert envelope.error.message == f"Duplicate call to pay: {where}."
    assert envelope.error.details == {"duplicate": True}
    assert envelope.error.recoverable


def the_intent(journal: Journal) -> JournalEntry:
    (intent,) = [e for e in journal.entries() if e.kind == "intent"]
    return intent


@pytest.mark.parametrize("lost", ["result", "intent"])
async def test_a_call_whose_write_was_lost_is_in_doubt_for_repeats_in_its_own_process(
    journal_url: str, lost: Lost
) -> None:
    paid: list[str] = []
    journal = LosesOneWrite(journal_url, lost=lost, committed=lost == "intent")  # an intent, committed
    other = SqlJournal(journal_url)
    try:
        executor = Executor(paying(paid), journal=journal)
        first = await executor.execute(CALL, Run(session_id=SESSION))
        assert isinstance(first, ErrorEnvelope)
        assert (first.error.code, first.error.details) == ("INTERNAL", {"in_doubt": True})
        intent = the_intent(journal)
        assert [e.id for e in await executor.in_doubt()] == [intent.id]
        assert_in_doubt(await executor.execute(CALL, Run(session_id=SESSION)), intent.id)  # same executor
        second = Executor(paying(paid), journal=other)  # another executor of this process, same journal
        assert_in_doubt(await second.execute(CALL, Run(session_id=SESSION)), intent.id)
        assert_in_doubt(await executor.execute(CALL, Run(session_id=SESSION)), intent.id)  # still
        assert paid == (["A-1"] if lost == "result" else [])  # never run again
    finally:
        journal.close()
        other.close()


async def test_a_call_whose_lost_result_was_committed_after_all_is_answered_with_it(
    journal_url: str,
) -> None:
    paid: list[str] = []
    journal = LosesOneWrite(journal_url, lost="result", committed=True)
    try:
        executor = Executor(paying(paid), journal=journal)
        first = await executor.execute(CALL, Run(session_id=SESSION))
        assert isinstance(first, ErrorEnvelope)
        assert first.error.details == {"in_doubt": True}
        assert await executor.in_doubt() == []  # the journal has its result
        assert await executor.execute(CALL, Run(session_id=SESSION)) == OkEnvelope(data="paid A-1")
        assert paid == ["A-1"]
    finally:
        journal.close()


class ResultInsertFails:
    """The SQLite journal's own connection, but for its next lone `INSERT` of a result (a statement that is
    its own transaction): an I/O error, reported after the row was written (`written`) or before."""

    def __init__(self, real: Any, *, written: bool):
        self.real, self.written, self.armed = real, written, True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def execute(self, sql: str, *args: Any) -> Any:
        lone = sql.startswith("INSERT") and not self.real.in_transaction
        if not (self.armed and lone and args and "result" in args[0]):
            return self.real.execute(sql, *args)
        self.armed = False
        if self.written:
            self.real.execute(sql, *args)
        raise sqlite3.OperationalError("disk I/O error")


@pytest.mark.parametrize("written", [False, True])
async def test_a_sqlite_result_write_ending_in_an_io_error_leaves_the_call_in_doubt(
    tmp_path: Path, written: bool
) -> None:
    paid: list[str] = []
    journal = SqlJournal(f"sqlite:///{tmp_path / 'journal.db'}")
    try:
        writer = getattr(journal, "_writer")  # noqa: B009 - the test breaks the writer's connection
        writer._now = ResultInsertFails(writer._now, written=written)
        executor = Executor(paying(paid), journal=journal)
        first = await executor.execute(CALL, Run(session_id=SESSION))
        assert isinstance(first, ErrorEnvelope)
        assert (first.error.code, first.error.details) == ("INTERNAL", {"in_doubt": True})  # not "failed"
        again = await executor.execute(CALL, Run(session_id=SESSION))
        if written:  # the result is there after all: it answers repeats
            assert again == OkEnvelope(data="paid A-1")
        else:
            assert_in_doubt(again, the_intent(journal).id)
        assert paid == ["A-1"]
    finally:
        journal.close()


async def test_a_call_stopped_part_way_is_in_doubt_for_repeats_not_running(
    journal_url: str, open_journal: OpenJournal
) -> None:
    started = anyio.Event()
    paid: list[str] = []

    @tool
    async def pay(account: str) -> str:
        paid.append(account)
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    executor = Executor(Toolset(pay), journal=open_journal(journal_url))
    async with anyio.create_task_group() as group:
        group.start_soon(executor.execute, CALL, Run(session_id=SESSION))
        await started.wait()
        group.cancel_scope.cancel()  # e.g. the run's time limit: the tool stopped, its result never written
    intent = the_intent(executor.journal)
    assert_in_doubt(await executor.execute(CALL, Run(session_id=SESSION)), intent.id)
    second = Executor(Toolset(pay), journal=open_journal(journal_url))
    assert_in_doubt(await second.execute(CALL, Run(session_id=SESSION)), intent.id)
    assert paid == ["A-1"]


async def test_a_call_stopped_part_way_is_in_doubt_in_a_journal_in_memory_too() -> None:
    # a journal in memory is written directly, and the idempotency guard decides without a coroutine
    started = anyio.Event()
    paid: list[str] = []

    @tool
    async def pay(account: str) -> str:
        paid.append(account)
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    executor = Executor(Toolset(pay), journal=MemoryJournal())
    async with anyio.create_task_group() as group:
        group.start_soon(executor.execute, CALL, Run(session_id=SESSION))
        await started.wait()
        group.cancel_scope.cancel()
    (intent,) = await executor.in_doubt()
    assert_in_doubt(await executor.execute(CALL, Run(session_id=SESSION)), intent.id)
    assert paid == ["A-1"]


async def test_a_call_still_running_here_is_answered_running_by_every_executor_and_thread(
    journal_url: str, open_journal: OpenJournal
) -> None:
    started, release = anyio.Event(), anyio.Event()
    paid: list[str] = []

    @tool
    async def pay(account: str) -> str:
        paid.append(account)
        started.set()
        await release.wait()
        return f"paid {account}"

    executor = Executor(Toolset(pay), journal=open_journal(journal_url))
    second = Executor(Toolset(pay), journal=open_journal(journal_url))
    in_thread = Executor(Toolset(pay), journal=open_journal(journal_url))
    answers: list[AnyEnvelope] = []

    async def first() -> None:
        answers.append(await executor.execute(CALL, Run(session_id=SESSION)))

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        await started.wait()
        assert_running(
            await executor.execute(CALL, Run(session_id=SESSION)), "the same call is already running"
        )
        here = f"the same call is running in process {os.getpid()}"
        assert_running(await second.execute(CALL, Run(session_id=SESSION)), here)
        elsewhere = await anyio.to_thread.run_sync(  # an executor used from another thread, on its own loop
            lambda: asyncio.run(in_thread.execute(CALL, Run(session_id=SESSION)))
        )
        assert_running(elsewhere, here)
        release.set()
    assert answers == [OkEnvelope(data="paid A-1")]
    for again in (executor, second):
        assert await again.execute(CALL, Run(session_id=SESSION)) == OkEnvelope(data="paid A-1")
    assert paid == ["A-1"]


async def test_concurrent_repeats_of_a_call_start_it_once_and_the_rest_are_told_to_wait(
    journal_url: str, open_journal: OpenJournal
) -> None:
    release, refused = anyio.Event(), anyio.Event()
    paid: list[str] = []

    @tool
    async def pay(account: str) -> str:
        paid.append(account)
        await release.wait()
        return f"paid {account}"

    executors = [Executor(Toolset(pay), journal=open_journal(journal_url)) for _ in range(2)]
    answers: list[AnyEnvelope] = []
    repeats = 8

    async def repeat(executor: Executor) -> None:
        envelope = await executor.execute(CALL, Run(session_id=SESSION))
        answers.append(envelope)
        if len(answers) == repeats - 1:  # all but the one running: refused while it runs
            refused.set()

    async with anyio.create_task_group() as group:
        for i in range(repeats):  # all at once: their claims in shared transactions (group commit)
            group.start_soon(repeat, executors[i % 2])
        await refused.wait()
        assert len(paid) == 1
        release.set()
    ok = [a for a in answers if isinstance(a, OkEnvelope)]
    assert ok == [OkEnvelope(data="paid A-1")]
    for answer in answers:
        if not isinstance(answer, OkEnvelope):
            assert isinstance(answer, ErrorEnvelope)
            assert answer.error.details == {"duplicate": True}  # told to wait: never in doubt
            assert answer.error.recoverable
    assert paid == ["A-1"]


async def test_a_repeat_that_looks_as_the_call_finishes_gets_its_result_not_in_doubt(
    journal_url: str, open_journal: OpenJournal, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The repeat finds the call's intent without a result, then (before it asks whether a call of this
    # process holds the key) the call finishes and lets go of its key: the repeat must look again.
    started, go, finished = threading.Event(), threading.Event(), threading.Event()
    paid: list[str] = []

    @tool
    def pay(account: str) -> str:
        paid.append(account)
        started.set()
        go.wait(30)
        return f"paid {account}"

    held = _idempotency.running_here
    asked: list[str] = []

    def late(key: str) -> bool:
        asked.append(key)
        go.set()  # the call ends, writes its result and lets go of its key, before the answer
        finished.wait(30)
        return held(key)

    monkeypatch.setattr(_idempotency, "running_here", late)
    executor = Executor(Toolset(pay), journal=open_journal(journal_url))
    second = Executor(Toolset(pay), journal=open_journal(journal_url))
    answers: list[AnyEnvelope] = []
    repeats: list[AnyEnvelope] = []

    async def first() -> None:
        answers.append(await executor.execute(CALL, Run(session_id=SESSION)))
        finished.set()

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        await anyio.to_thread.run_sync(started.wait, 30)
        repeats.append(
            await anyio.to_thread.run_sync(lambda: asyncio.run(second.execute(CALL, Run(session_id=SESSION))))
        )
    assert len(asked) == 1  # the race happened
    assert answers == [OkEnvelope(data="paid A-1")]
    assert repeats == [OkEnvelope(data="paid A-1")]
    assert paid == ["A-1"]


class ForgetsOnce(MemoryJournal):
    """A journal that changes between the executor's look and its claim (as another process sharing a
    database can make it): with `forget`, `lookup` finds the earlier success, which `claim` no longer does."""

    forget = False

    def lookup(self, idempotency_key: str) -> Lookup:
        found = super().lookup(idempotency_key)
        if self.forget:
            self.forget = False
            self._latest_intent.clear()
        return found


class FailsWhenArmed:
    """A domain guard with a bug: it raises when armed."""

    armed = False

    async def check(self, attempt: Attempt) -> Decision:
        if self.armed:
            raise RuntimeError("the approval service is down")
        return Allow()


async def test_a_claimed_call_whose_domain_guard_raises_lets_go_of_its_key() -> None:
    # The journal answered the call (so the domain guard was skipped), then its claim went through after
    # all: the guard, asked then, raises. The call never runs; its intent is in doubt, not running forever.
    paid: list[str] = []
    journal, guard = ForgetsOnce(), FailsWhenArmed()
    executor = Executor(paying(paid), journal=journal, guards=[guard])
    assert await executor.execute(CALL, Run(session_id=SESSION)) == OkEnvelope(data="paid A-1")
    journal.forget = guard.armed = True
    failed = await executor.execute(CALL, Run(session_id=SESSION))
    assert isinstance(failed, ErrorEnvelope)
    assert failed.error.code == "INTERNAL"
    guard.armed = False
    (intent,) = await executor.in_doubt()
    assert_in_doubt(await executor.execute(CALL, Run(session_id=SESSION)), intent.id)
    assert paid == ["A-1"]


def test_which_keys_this_process_holds_is_known_while_other_threads_make_and_drop_executors() -> None:
    # the registry of every executor's keys is a `WeakSet`, which raises if another thread changes it while
    # it is copied (here, without the registry's lock, some looks would raise)
    kept = [Executor(Toolset()) for _ in range(300)]  # a registry that takes a while to copy
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            Executor(Toolset())

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)  # threads switch often: the copies overlap the other thread's changes
    maker = threading.Thread(target=churn)
    maker.start()
    try:
        assert not any(_idempotency.running_here(f"k{i}") for i in range(1000))
    finally:
        stop.set()
        maker.join()
        sys.setswitchinterval(interval)
    assert len(kept) == 300
