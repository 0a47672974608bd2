"""`Executor`: every call through the guards, into its tool, and into the journal; one envelope back."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

import anyio
import anyio.to_thread
import pydantic_core

from tether import _wire, envelopes
from tether.execution._decisions import Allow, Decision, Refuse, Replay
from tether.execution._guards import (
    Attempt,
    Guard,
    IdempotencyGuard,
    PrincipalGuard,
    QuotaGuard,
    RateLimitGuard,
    RepairedCallGuard,
    SchemaGuard,
    UnknownToolGuard,
    WhyGuard,
    applies,
    idempotency_key,
    rate_limited,
)
from tether.execution._invoke import Deadlines, ToolResult, invoke
from tether.execution._plain import plain_scalar
from tether.execution._policy import Policy
from tether.execution._records import CallReport, Recorder, kalygo_record, tool_type
from tether.execution._run import Run
from tether.store import (
    EntryKind,
    Journal,
    JournalEntry,
    Lookup,
    MemoryJournal,
    MemoryRateLimits,
    Outcome,
    RateLimits,
)
from tether.store.internal import JournalWriter, RateLimited, resolution, storable, storable_text
from tether.tools import Tool, ToolContext, ToolsLike, as_toolset, redact
from tether.types import AnyEnvelope, ErrorEnvelope, OkEnvelope, ToolCall

__all__ = ["Executor"]

T = TypeVar("T")
_Step = tuple[Guard, Callable[[Attempt], Decision | None] | None]
"""A guard, and its `check_now` if it has one: the decision without waiting, or None to await `check`."""
_HOST = socket.gethostname()
_ENTRY_ORDER = (
    *("kind", "call_id", "tool", "created_at", "id", "intent_id", "session_id", "run_id", "idempotency_key"),
    *("side_effects", "principal", "why", "arguments", "annotations", "repairs", "repaired", "outcome"),
    *("error_code", "envelope", "duration_ms", "traceback", "pid", "host", "note", "extra"),
)
"""The values `Executor._entry` makes, in this order."""
_ENTRY_IN_ORDER = tuple(f.name for f in dataclasses.fields(JournalEntry))[: len(_ENTRY_ORDER)] == _ENTRY_ORDER
"""Whether they are `JournalEntry`'s first fields in the same order, so that they can be passed by position
(else by name: the same entry, ~0.9 µs slower)."""
_process = {"pid": os.getpid()}  # os.getpid() is a system call; a forked child sets its own
os.register_at_fork(after_in_child=lambda: _process.update(pid=os.getpid()))


class Executor:
    """Runs tool calls safely: guards in a fixed order, the tool under its timeout, a journal entry before
    and after, and exactly one envelope per call.

    Args:
        tools: Where calls find their tools: a toolset, or anything `tether.tools.as_toolset` accepts.
        policy: The limits to enforce.
        journal: Where intents and results are recorded; by default in memory (idempotency within this
            process only). Use `tether.store.SqlJournal` to keep them, and to survive crashes.
        guards: Domain guards (e.g. one that answers `CONNECTION_INACTIVE`), run after the scopes check.
        recorders: Told about every answered call, e.g. `tether.execution.SessionLog`.
        rate_limits: Where rate-limit buckets live; by default the journal's (`SqlJournal.rate_limits`,
            shared by every executor on its database) if it keeps them, else this executor's memory.
        clock: Monotonic seconds, for rate limits kept in memory.
    """

    def __init__(
        self,
        tools: ToolsLike,
        *,
        policy: Policy | None = None,
        journal: Journal | None = None,
        guards: Sequence[Guard] = (),
        recorders: Sequence[Recorder] = (),
        rate_limits: RateLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.toolset = toolset = as_toolset(tools)
        self.policy = policy or Policy()
        self.journal: Journal = journal if journal is not None else MemoryJournal()
        kept: RateLimits | None = getattr(self.journal, "rate_limits", None)  # a journal may keep them
        self.rate_limits: RateLimits = rate_limits or kept or MemoryRateLimits(clock)
        self._recorders = tuple(recorders)
        # the journal's own buckets: a call's token is taken in the transaction that writes its intent
        takes_tokens: bool = getattr(self.journal, "takes_rate_tokens", False)  # see `SqlJournal.claim`
        folded = kept is not None and self.rate_limits is kept and takes_tokens
        self._journal_limiter = anyio.CapacityLimiter(1)
        self._writer = JournalWriter(self.journal, self._journal_limiter)  # inline, threaded or grouped
        # a journal that answers at once (in memory) is written directly, as the writer would: no coroutines
        self._direct = not self.journal.blocking and not getattr(self.journal, "inline", False)
        self._in_flight: set[str] = set()
        self._deadlines: Deadlines | None = None
        """The timeouts of this executor's async tools, on the loop it last ran on (one timer between them)."""
        self._running: set[int | None] = set()
        self._plans: dict[int, tuple[Tool[..., Any] | None, tuple[_Step, ...]]] = {}
        self.guards: tuple[Guard, ...] = (
            UnknownToolGuard(toolset),
            SchemaGuard(),
            WhyGuard(),
            PrincipalGuard(),
            *guards,
            QuotaGuard(),
            RepairedCallGuard(),
            RateLimitGuard(self.rate_limits, self._journal_limiter, defer=folded),
            IdempotencyGuard(
                self._claim,
                self._lookup,
                self._in_flight,
                claim_now=self._claim_now if self._direct else None,
                lookup_now=self.journal.lookup if self._direct else None,
            ),
        )
        """The pipeline, in the order it runs (see `tether.execution`); each call passes the guards that
        apply to its tool."""

    # ------------------------------------------------------------------------------------------ public

    async def execute(self, call: ToolCall, run: Run | None = None) -> AnyEnvelope:
        """Answer one call with exactly one envelope; never raises on anything the model or a tool does."""
        run = run if run is not None else Run()
        self._writer.calls += 1  # while calls overlap, their journal writes share transactions
        try:
            return await self._execute(call, run)
        except Exception:  # a bug of ours must not reach the model as an exception either
            envelope = _internal_error(call.name)
            attempt = Attempt(call, None, run, self.policy)
            entry = self._entry("refusal", attempt, {}, _jsonable(envelope), trace=traceback.format_exc())
            with contextlib.suppress(Exception):  # the journal itself may be what failed
                await self._writer.append(entry)
            return envelope
        finally:
            self._writer.calls -= 1

    async def execute_all(
        self,
        calls: Sequence[ToolCall],
        run: Run | None = None,
        *,
        on_result: Callable[[int, AnyEnvelope], Awaitable[None]] | None = None,
    ) -> list[AnyEnvelope]:
        """Answer a batch of calls, returning envelopes in call order.

        Calls start in order of priority (higher first; the call's own, else its tool's); independent calls
        run concurrently up to `policy.max_concurrency`; a call to a `sequential` tool waits for every call
        started before it and runs alone. `on_result(index, envelope)` hears of each call as it is answered.
        """
        run = run if run is not None else Run()
        if len(calls) == 1:  # nothing to order or overlap: no closure, no list of slots
            envelope = await self.execute(calls[0], run)
            if on_result is not None:
                await on_result(0, envelope)
            return [envelope]
        results: list[AnyEnvelope | None] = [None] * len(calls)

        async def answer(index: int) -> None:
            results[index] = envelope = await self.execute(calls[index], run)
            if on_result is not None:
                await on_result(index, envelope)

        tools = [self.toolset.get(c.name) for c in calls]  # once a call, for its priority and ordering
        order = sorted(range(len(calls)), key=lambda i: -_priority(calls[i], tools[i]))
        # Plain asyncio tasks (the executor runs on asyncio): ~4x cheaper a call than an anyio task group's,
        # and no semaphore when the batch fits in `max_concurrency` anyway.
        most = self.policy.max_concurrency
        slots = asyncio.Semaphore(most) if len(calls) > most else None

        async def one(index: int) -> None:  # a slot of the semaphore's, released once answered
            assert slots is not None
            try:
                await answer(index)
            finally:
                slots.release()

        position = 0
        while position < len(order):
            index = order[position]
            if _sequential(tools[index]):
                await answer(index)
                position += 1
                continue
            async with asyncio.TaskGroup() as group:
                while position < len(order) and not _sequential(tools[order[position]]):
                    if slots is None:  # the whole batch at once: a task a call, no wrapper
                        group.create_task(answer(order[position]))
                    else:
                        await slots.acquire()
                        group.create_task(one(order[position]))
                    position += 1
        return [r for r in results if r is not None]

    async def in_doubt(self) -> list[JournalEntry]:
        """Intents in the journal with no result that are not running in this executor, oldest first."""
        entries = await self._writer.offload(self.journal.in_doubt)
        return [e for e in entries if e.id not in self._running and e.idempotency_key not in self._in_flight]

    async def resolve(
        self, intent: JournalEntry, *, envelope: AnyEnvelope | None = None, note: str = ""
    ) -> None:
        """Settle a call in doubt: `envelope=None` records that it did not take effect (it may run again);
        an envelope records what it did, and repeats of the call get that envelope."""
        entry = resolution(intent, envelope=None if envelope is None else _jsonable(envelope), note=note)
        await self._writer.append(entry)

    # ----------------------------------------------------------------------------------------- pipeline

    def _guards_for(self, tool: Tool[..., Any] | None) -> tuple[_Step, ...]:
        """The guards that could refuse a call to `tool`, worked out once per tool, each with its synchronous
        `check_now` when it has one (no coroutine a guard a call)."""
        found = self._plans.get(id(tool))
        if found is not None and found[0] is tool:
            return found[1]
        if len(self._plans) > 4096:  # toolsets that make new tool objects as they go: stay bounded
            self._plans.clear()
        steps = tuple(
            (g, getattr(g, "check_now", None)) for g in self.guards if applies(g, tool, self.policy)
        )
        self._plans[id(tool)] = (tool, steps)
        return steps

    async def _execute(self, call: ToolCall, run: Run) -> AnyEnvelope:
        tool = self.toolset.get(call.name)
        attempt = Attempt(call, tool, run, self.policy)
        for guard, check_now in self._guards_for(tool):
            decision = None if check_now is None else check_now(attempt)
            if decision is None:
                try:
                    decision = await guard.check(attempt)
                except RateLimited as limited:  # the claim took the rate-limit guard's token: there was none
                    decision = self._rate_limited(attempt, limited)
            if isinstance(decision, Allow):
                if decision.validated is not None:
                    attempt.validated = decision.validated
                    attempt.call = decision.validated.call
                    attempt.idempotency_key = self._key(attempt)
                continue
            return await self._refused(attempt, decision)
        if attempt.intent is None and attempt.tool is not None:  # not claimed: the intent, with its token
            intent = self._entry("intent", attempt, attempt.arguments(), None)
            try:
                if self._direct and attempt.rate_token is None:
                    attempt.intent = self.journal.append(intent)
                else:
                    attempt.intent = await self._writer.append(intent, attempt.rate_token)
            except RateLimited as limited:
                return await self._refused(attempt, self._rate_limited(attempt, limited))
        arguments = attempt.arguments()
        # the tool, then its result: in this coroutine rather than one more a call (~0.5 µs, and every wake-up
        # of a tool that waits goes through each coroutine it is awaited from)
        try:
            intent = attempt.intent  # written by the idempotency guard's claim, or else just above
            assert intent is not None
            assert tool is not None
            self._running.add(intent.id)
            started = time.perf_counter()
            try:
                prepared = self._arguments_for(attempt, tool)
                if isinstance(prepared, ToolResult):
                    outcome = prepared
                else:
                    deadlines = self._deadlines
                    if deadlines is None or deadlines.loop is not asyncio.get_running_loop():
                        deadlines = self._deadlines = Deadlines(asyncio.get_running_loop())
                    outcome = await invoke(tool, prepared[0], timeout_s=prepared[1], deadlines=deadlines)
            finally:
                self._running.discard(intent.id)
            duration_ms = (time.perf_counter() - started) * 1000
            outcome, envelope_json = self._settle(tool, outcome)
            result = self._entry(
                "result", attempt, arguments, envelope_json, outcome.traceback, duration_ms, intent.id
            )
            if self._direct:
                self.journal.append(result)
            else:
                await self._writer.append(result)
        finally:
            if attempt.idempotency_key is not None:
                self._in_flight.discard(attempt.idempotency_key)
        envelope = outcome.envelope
        if self.policy.max_output_bytes_per_run is not None and isinstance(envelope, OkEnvelope):
            run.output_bytes += len(pydantic_core.to_json(envelope.data, fallback=repr))
        report = self._record(attempt, "ran", envelope, arguments, envelope_json, duration_ms)
        if report is not None:
            await self._tell(report)
        return envelope

    async def _refused(self, attempt: Attempt, decision: Refuse | Replay) -> AnyEnvelope:
        """Answer a call a guard refused (`Refuse`, journaled) or answered from the journal (`Replay`)."""
        arguments = attempt.arguments()
        envelope, envelope_json = _settled(decision.envelope, None)
        refused = isinstance(decision, Refuse)
        if refused:
            refusal_entry = self._entry("refusal", attempt, arguments, envelope_json)
            await self._writer.append(refusal_entry)
        report = self._record(
            attempt, "refused" if refused else "replayed", envelope, arguments, envelope_json, None
        )
        if report is not None:
            await self._tell(report)
        return envelope

    @staticmethod
    def _rate_limited(attempt: Attempt, limited: RateLimited) -> Refuse:
        assert attempt.tool is not None
        assert attempt.rate_token is not None
        return rate_limited(attempt.tool.name, attempt.rate_token.limit, limited.retry_after)

    def _arguments_for(
        self, attempt: Attempt, tool: Tool[..., Any]
    ) -> tuple[dict[str, Any], float | None] | ToolResult:
        """The tool's keyword arguments (its context injected) and its timeout; what failed, if making them did."""
        validated, call, run = attempt.validated, attempt.call, attempt.run
        assert validated is not None
        try:
            context = None
            if tool.context_parameter is not None:
                context = ToolContext(call, run.principal.id, run.principal.scopes, run.session_id, run.deps)
            kwargs = tool.call_arguments(validated, context)
        except Exception:
            return ToolResult(_internal_error(tool.name), traceback.format_exc())
        timeout_ms = tool.spec.sandbox.timeout_ms
        return kwargs, timeout_ms / 1000 if timeout_ms is not None else self.policy.default_timeout_s

    @staticmethod
    def _settle(tool: Tool[..., Any], outcome: ToolResult) -> tuple[ToolResult, dict[str, Any]]:
        """The tool's outcome as the journal and the model get it, and its envelope's JSON (`_settled`)."""
        try:
            envelope, envelope_json = _settled(outcome.envelope, tool.spec.output_schema)
            if envelope is not outcome.envelope:
                outcome = ToolResult(envelope, outcome.traceback)
        except Exception:  # the intent must get a result all the same, or it stays in doubt
            outcome = ToolResult(_internal_error(tool.name), traceback.format_exc())
            envelope_json = _jsonable(outcome.envelope)
        return outcome, envelope_json

    # ------------------------------------------------------------------------------------------ helpers

    async def _claim(self, attempt: Attempt) -> Lookup:
        intent = self._entry("intent", attempt, attempt.arguments(), None)
        found = await self._writer.claim(intent, attempt.rate_token)
        if intent.id is not None:
            attempt.intent = intent
        return found

    def _claim_now(self, attempt: Attempt) -> Lookup | None:
        """`_claim` for a journal written directly; None if a rate-limit token must be taken with the intent."""
        if attempt.rate_token is not None:
            return None
        intent = self._entry("intent", attempt, attempt.arguments(), None)
        found = self.journal.claim(intent)
        if intent.id is not None:
            attempt.intent = intent
        return found

    async def _lookup(self, key: str) -> Lookup:
        return await self._writer.offload(self.journal.lookup, key)

    def _key(self, attempt: Attempt) -> str | None:
        assert attempt.tool is not None
        spec = attempt.tool.spec
        if spec.side_effects == "none" and not spec.idempotency_fields:
            return None  # reading again is harmless, and a replay could be stale
        run = attempt.run
        scope = run.session_id if run.session_id is not None else run.id
        return idempotency_key(attempt.call, attempt.tool.spec, principal=run.principal.id, scope=scope)

    @staticmethod
    def _entry(
        kind: EntryKind,
        attempt: Attempt,
        arguments: dict[str, Any],
        envelope_json: dict[str, Any] | None,
        trace: str | None = None,
        duration_ms: float | None = None,
        intent_id: int | None = None,
    ) -> JournalEntry:
        run = attempt.run
        call_id, name, why, repairs, repaired = attempt.columns()
        outcome: Outcome | None = None
        error_code: str | None = None
        if envelope_json is not None:
            outcome = _outcome(envelope_json)
            error: Any = envelope_json.get("error")
            if isinstance(error, dict):
                error_code = str(error["code"])  # pyright: ignore[reportUnknownArgumentType]
        extra: dict[str, Any] = {}  # what the field's default makes, without `dict[str, Any]()` (~0.3 µs)
        values: tuple[Any, ...] = (
            kind,
            call_id,
            name,
            time.time(),  # created_at
            None,  # id: the journal's to set
            intent_id,
            run.session_id,
            run.id,
            attempt.idempotency_key,
            attempt.tool.spec.side_effects if attempt.tool is not None else None,
            run.principal.id,
            why,
            arguments,
            attempt.call.annotations,
            repairs,
            repaired,
            outcome,
            error_code,
            envelope_json,
            duration_ms,
            storable_text(trace) if trace is not None else None,
            _process["pid"],
            _HOST,
            None,  # note
            extra,
        )
        if _ENTRY_IN_ORDER:  # by position: a third of what 25 keywords cost (~0.9 µs an entry saved)
            return JournalEntry(*values)
        return JournalEntry(**dict(zip(_ENTRY_ORDER, values, strict=True)))

    def _record(
        self,
        attempt: Attempt,
        status: Literal["ran", "refused", "replayed"],
        envelope: AnyEnvelope,
        arguments: dict[str, Any],
        envelope_json: dict[str, Any],
        duration_ms: float | None,
    ) -> CallReport | None:
        """Kalygo's record of the call, on its run; and the report for the recorders, if there are any."""
        spec = attempt.tool.spec if attempt.tool is not None else None
        output = envelope_json.get("data") if envelope.ok else envelope_json
        if not self._recorders:  # the record alone: no report to make
            attempt.run.records.append(_wire.record(tool_type(spec), attempt.call.name, arguments, output))
            return None
        report = CallReport(
            call=attempt.call,
            spec=spec,
            run=attempt.run,
            status=status,
            envelope=envelope,
            arguments=arguments,
            output=output,
            duration_ms=duration_ms,
        )
        attempt.run.records.append(kalygo_record(report))
        return report

    async def _tell(self, report: CallReport) -> None:
        for recorder in self._recorders:
            await anyio.to_thread.run_sync(recorder.record, report)


def _priority(call: ToolCall, tool: Tool[..., Any] | None) -> int:
    if call.priority is not None:
        return call.priority
    return tool.spec.priority if tool is not None else 0


def _sequential(tool: Tool[..., Any] | None) -> bool:
    return tool is not None and tool.spec.sequential


def _jsonable(value: Any) -> Any:
    return pydantic_core.to_jsonable_python(value, fallback=repr)


def _outcome(envelope_json: dict[str, Any]) -> Outcome:
    if envelope_json.get("ok") is True:
        return "ok"
    return "needs" if envelope_json.get("needs") is not None else "error"


def _settled(
    envelope: AnyEnvelope, output_schema: dict[str, Any] | None
) -> tuple[AnyEnvelope, dict[str, Any]]:
    """The envelope as every journal can store it and every model API carry it (`storable`: e.g. a lone
    surrogate in a tool's error message would fail both), and its JSON for the journal and the records, with
    what the output schema marks secret redacted from its data."""
    if type(envelope) is OkEnvelope and plain_scalar(envelope.data):  # the usual result: JSON, storable
        data: dict[str, Any] = {"ok": True, "data": envelope.data}
    else:
        raw: dict[str, Any] = _jsonable(envelope)
        data = storable(raw)
        if data is not raw or (isinstance(envelope, OkEnvelope) and data["data"] != envelope.data):
            envelope = envelopes.from_json(data)  # e.g. NaN, which JSON (so the journal) has as null
    if output_schema and isinstance(envelope, OkEnvelope):
        data["data"] = redact(data.get("data"), output_schema)  # `data` is a fresh copy: no one else holds it
    return envelope, data


def _internal_error(name: str) -> ErrorEnvelope:
    return envelopes.internal(name, "tether hit an internal error")
