"""`JournalWriter`: how the executor writes to its journal, one call or many at once (group commit)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import anyio
import anyio.lowlevel
import anyio.to_thread

from tether.store._entries import JournalEntry, Lookup, OutcomeUnknown, WouldWait
from tether.store._journal import Journal
from tether.store._rate_limits import RateLimited, RateToken, Write

__all__ = ["JournalWriter"]

T = TypeVar("T")
_Result = Lookup | JournalEntry | RateLimited | BaseException
_MOST = 512
"""Writes in one transaction at most."""
_IDLE_TURNS = 2
"""Turns of the event loop that bring no write to a batch before it commits: a call started by another
task (`execute_all`) may need two to reach its first write."""


class _Batch:
    __slots__ = ("done", "results", "thread", "writes")

    def __init__(self) -> None:
        self.writes: list[Write] = []
        self.results: list[_Result] = []
        self.done = anyio.Event()
        self.thread = threading.get_ident()
        """The event loop's: a call on another loop (an executor shared across threads) writes alone."""


def _unknown(cause: OutcomeUnknown) -> OutcomeUnknown:
    """The batch's `OutcomeUnknown` for one of its writes: each call raises its own."""
    unknown = OutcomeUnknown(*cause.args)
    unknown.__cause__ = cause.__cause__
    return unknown


def _raised(result: _Result) -> Lookup | JournalEntry:
    """A grouped write's result; the exception it ended with, raised."""
    if isinstance(result, BaseException):
        raise result
    return result


class JournalWriter:
    """Commits the executor's journal writes: each on the caller's thread when the journal can commit without
    waiting (`inline`, see `SqlJournal`), else in a worker thread; and, while several calls are in progress
    (`calls`, kept by the executor), the writes they make at the same moment in one transaction.

    Group commit keeps every guarantee of a write alone: a write returns only once committed, so a call's
    tool starts only after the transaction holding its intent commits, and its envelope is returned only
    after the one holding its result does; a crash before a commit loses the writes of calls that were all
    still waiting for it (none of their tools started, none of their envelopes was returned). Each claim is
    as atomic as alone (the transaction holds the locks), and a write whose rate-limit token was missing
    writes nothing without undoing the others. A batch the database refuses before committing (one entry
    it will not take) is written again one write at a time, so that only that write fails; one whose
    commit may have gone through (`OutcomeUnknown`: the connection lost after the `COMMIT` was sent) is not:
    each of its writes fails with `OutcomeUnknown`, never written twice, its call in doubt as after a crash.
    The first write of a batch waits while other calls join it: until two turns of the event loop bring no
    more. A sequential caller (one call at a time) never waits.

    Args:
        journal: Where to write.
        limiter: Bounds the worker threads a blocking journal is called from.
    """

    def __init__(self, journal: Journal, limiter: anyio.CapacityLimiter):
        self.journal = journal
        self.calls = 0
        """Calls in progress; above one, concurrent writes are grouped."""
        self._limiter = limiter
        self._inline: bool = getattr(journal, "inline", False)
        self._claim_inline: Callable[..., Any] = journal.claim  # takes `wait=` (and `take=`) when `_inline`
        self._append_inline: Callable[..., Any] = journal.append
        writes_async = getattr(journal, "writes_async", False)  # see `SqlJournal.writes_async`
        self._claim_async: Callable[..., Awaitable[Any]] | None = (
            getattr(journal, "claim_async", None) if writes_async else None
        )
        self._append_async: Callable[..., Awaitable[Any]] | None = (
            getattr(journal, "append_async", None) if writes_async else None
        )
        self._batch_async: Callable[..., Awaitable[list[_Result]]] | None = (
            getattr(journal, "write_batch_async", None) if writes_async else None
        )
        batch: Any = getattr(journal, "write_batch", None)
        self._write_batch: Callable[..., list[_Result]] | None = batch if journal.blocking else None
        self._open: _Batch | None = None

    async def claim(self, intent: JournalEntry, take: RateToken | None = None) -> Lookup:
        """`Journal.claim`, with the rate-limit token `take` in the same transaction (`RateLimited` without)."""
        if self._write_batch is not None and self.calls > 1:
            return cast("Lookup", _raised(await self._grouped(Write(intent, claim=True, take=take))))
        if self._inline:  # the usual case first, as `_single` does it: no coroutine, no `Write`
            try:
                if take is None:
                    return self._claim_inline(intent, wait=False)
                return self._claim_inline(intent, wait=False, take=take)
            except WouldWait:
                pass
        if self._claim_async is not None:  # from the event loop, no worker thread
            try:
                return await self._claim_async(intent, take=take, connect=False)
            except WouldWait:
                pass
        return cast("Lookup", await self._blocking(Write(intent, claim=True, take=take)))

    async def append(self, entry: JournalEntry, take: RateToken | None = None) -> JournalEntry:
        """`Journal.append`, with the rate-limit token `take` in the same transaction (`RateLimited` without)."""
        if self._write_batch is not None and self.calls > 1:
            return cast("JournalEntry", _raised(await self._grouped(Write(entry, take=take))))
        if self._inline:  # the usual case first, as `_single` does it: no coroutine, no `Write`
            try:
                if take is None:
                    return self._append_inline(entry, wait=False)
                return self._append_inline(entry, wait=False, take=take)
            except WouldWait:
                pass
        if self._append_async is not None:  # from the event loop, no worker thread
            try:
                return await self._append_async(entry, take=take, connect=False)
            except WouldWait:
                pass
        return cast("JournalEntry", await self._blocking(Write(entry, take=take)))

    async def offload(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` of the journal: in a worker thread if it blocks."""
        if not self.journal.blocking:
            return function(*args)
        return await anyio.to_thread.run_sync(functools.partial(function, *args), limiter=self._limiter)

    async def _single(self, write: Write) -> Lookup | JournalEntry:
        """`write` alone: on the caller's thread if the journal can commit it without waiting, or from the
        event loop (`writes_async`), else `_blocking`."""
        function: Callable[..., Any] = self.journal.claim if write.claim else self.journal.append
        kwargs: dict[str, Any] = {} if write.take is None else {"take": write.take}
        if self._inline:
            try:
                return function(write.entry, wait=False, **kwargs)
            except WouldWait:
                pass
        asynchronous = self._claim_async if write.claim else self._append_async
        if asynchronous is not None:  # from the event loop, no worker thread
            try:
                return await asynchronous(write.entry, take=write.take, connect=False)
            except WouldWait:
                pass
        return await self._blocking(write)

    async def _blocking(self, write: Write) -> Lookup | JournalEntry:
        """`write` alone, waiting as long as it must: in a worker thread if the journal blocks."""
        function: Callable[..., Any] = self.journal.claim if write.claim else self.journal.append
        kwargs: dict[str, Any] = {} if write.take is None else {"take": write.take}
        if not self.journal.blocking:
            return function(write.entry, **kwargs)
        call = functools.partial(function, write.entry, **kwargs)
        return await anyio.to_thread.run_sync(call, limiter=self._limiter)

    async def _grouped(self, write: Write) -> _Result:
        batch = self._open
        if batch is not None and batch.thread != threading.get_ident():
            return await self._single(write)
        if batch is not None and len(batch.writes) < _MOST:
            index = len(batch.writes)
            batch.writes.append(write)
            with anyio.CancelScope(shield=True):  # the write is the batch's now: learn how it ended
                await batch.done.wait()
            return batch.results[index]
        batch = self._open = _Batch()
        batch.writes.append(write)
        with anyio.CancelScope(shield=True):  # the others wait on this task: it must commit for them
            joined, idle = 0, 0
            while idle < _IDLE_TURNS and len(batch.writes) < _MOST:  # let the calls about to write join
                idle = idle + 1 if len(batch.writes) == joined else 0
                joined = len(batch.writes)
                await anyio.lowlevel.cancel_shielded_checkpoint()
            if self._open is batch:
                self._open = None
            try:
                batch.results = await self._commit(batch.writes)
            finally:
                batch.done.set()
        return batch.results[0]

    async def _commit(self, writes: list[Write]) -> list[_Result]:
        assert self._write_batch is not None
        if len(writes) == 1:
            return await self._one_by_one(writes)
        try:
            if self._inline:
                try:
                    return self._write_batch(writes, wait=False)
                except WouldWait:
                    pass
            if self._batch_async is not None:  # from the event loop, no worker thread
                try:
                    return await self._batch_async(writes, connect=False)
                except WouldWait:
                    pass
            call = functools.partial(self._write_batch, writes)
            return await anyio.to_thread.run_sync(call, limiter=self._limiter)
        except OutcomeUnknown as unknown:  # it may have committed: written again, it could be there twice
            return [_unknown(unknown) for _ in writes]  # each call in doubt, as after a crash
        except Exception:  # nothing written (e.g. one entry the database refuses): no other write should fail
            for write in writes:
                write.entry.id = None  # set by an insert the rollback undid (a claim went through iff set)
            return await self._one_by_one(writes)

    async def _one_by_one(self, writes: list[Write]) -> list[_Result]:
        results: list[_Result] = []
        for write in writes:
            try:
                results.append(await self._single(write))
            except Exception as e:  # `RateLimited` included: raised in the caller's task
                results.append(e)
        return results
