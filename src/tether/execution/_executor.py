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
from tether.execution._invoke import Deadlines, ToolResult, Waiting, finish, invoke, start
from tether.execution._plain import plain_scalar
from tether.execution._policy import Policy
from tether.execution._records import (
    CallReport,
    Recorder,
    echo_free,
    kalygo_record,
    marks_secret,
    tool_type,
)
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
from tether.store.internal import (
    JournalWriter,
    OutcomeUnknown,
    RateLimited,
    replays,
    resolution,
    storable,
    storable_text,
)
from tether.tools import Tool, ToolContext, ToolsLike, as_toolset, redact
from tether.types import AnyEnvelope, ErrorEnvelope, OkEnvelope, ToolCall

__all__ = ["Executor"]

T = TypeVar("T")
_Step = tuple[Guard, Callable[[Attempt], Decision | None] | None, bool]
"""A guard; its `check_now` if it has one (the decision without waiting, or None to await `check`); and
whether it is a domain guard (given to the executor), which a call the journal answers skips."""
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
        self._complete: Callable[[JournalEntry, Callable[..., JournalEntry], tuple[Any, ...]], int] | None = (
            getattr(self.journal, "complete", None) if self._direct else None
        )
        """A journal's way to take a result entry it makes only when read (`MemoryJournal.complete`)."""
        self._in_flight: set[str] = set()
        self._deadlines: Deadlines | None = None
        """The timeouts of this executor's async tools, on the loop it last ran on (one timer between them)."""
        self._running: set[int | None] = set()
        self._plans: dict[int, _Plan] = {}
        self._domain_guards = tuple(guards)
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
        """Answer one call with exactly one envelope; never raises on anything the model or a tool does.

        The whole call runs in this one coroutine (the guards, the journal, the tool and its result): one
        coroutine fewer a call than a helper's, and every wake-up of a tool that waits goes through each
        coroutine it is awaited from."""
        run = run if run is not None else Run()
        writer = self._writer
        writer.calls += 1  # while calls overlap, their journal writes share transactions
        try:
            tool = self.toolset.get(call.name)
            plan = self._plan(tool)
            attempt = Attempt(call, tool, run, plan.policy)
            answered: bool | None = None  # whether the journal answers the call: then no domain guard asks
            for guard, check_now, domain in plan.steps:
                if domain:
                    if answered is None:
                        answered = await self._answered(attempt)
                    if answered:
                        continue
                decision = None if check_now is None else check_now(attempt)
                if decision is None:
                    try:
                        decision = await guard.check(attempt)
                    except RateLimited as limited:  # the claim took the rate-limit token: there was none
                        decision = self._rate_limited(attempt, limited)
                if isinstance(decision, Allow):
                    validated = decision.validated
                    if validated is not None:
                        attempt.validated = validated
                        attempt.call = validated.call
                        if plan.keyed:
                            attempt.idempotency_key = self._key(attempt)
                    continue
                return await self._refused(attempt, decision)
            assert tool is not None, "the unknown-tool guard refuses the rest"
            intent = attempt.intent
            if intent is None:  # not claimed: the intent, with its token
                intent = self._entry("intent", attempt, attempt.arguments(), None)
                try:
                    if self._direct and attempt.rate_token is None:
                        intent = attempt.intent = self.journal.append(intent)
                    else:
                        intent = attempt.intent = await writer.append(intent, attempt.rate_token)
                except RateLimited as limited:
                    return await self._refused(attempt, self._rate_limited(attempt, limited))
            elif answered:  # the journal's answer changed meanwhile and the call runs after all: ask first
                refused = await self._ask_after_claim(attempt, plan)
                if refused is not None:
                    return refused
            arguments = attempt.arguments()
            key = attempt.idempotency_key
            try:  # the tool, then its result
                running = self._running
                running.add(intent.id)
                started = time.perf_counter()
                try:
                    prepared = self._arguments_for(attempt, tool, plan)
                    if isinstance(prepared, ToolResult):
                        outcome = prepared
                    elif plan.starts_now:  # async, in this process: run to its first wait, then await
                        outcome = start(tool, prepared)
                        if isinstance(outcome, Waiting):
                            deadlines = self._deadlines_here()
                            timeout_s = plan.timeout_s
                            outcome = await finish(
                                tool, outcome, timeout_s=timeout_s, started=started, deadlines=deadlines
                            )
                    else:
                        outcome = await invoke(tool, prepared, timeout_s=plan.timeout_s)
                finally:
                    running.discard(intent.id)
                duration_ms = (time.perf_counter() - started) * 1000
                outcome, envelope_json = _settle(tool, outcome, plan)
                known = run.secrets
                if plan.secret or (known is not None and known.forms):
                    # the secrets' echoes go too: in the result, its error message, its traceback
                    envelope_json, trace = echo_free(
                        run,
                        outcome.envelope,
                        envelope_json,
                        outcome.traceback,
                        learn=plan.output_schema is not None,
                    )
                    outcome = ToolResult(outcome.envelope, trace)
                if self._complete is not None:  # made when read, if ever (`MemoryJournal.complete`)
                    made = (
                        intent,
                        envelope_json,
                        outcome.traceback,
                        duration_ms,
                        time.time(),
                        _process["pid"],
                    )
                    self._complete(intent, _result_entry, made)
                else:
                    result = _result_entry(
                        intent, envelope_json, outcome.traceback, duration_ms, time.time(), _process["pid"]
                    )
                    if self._direct:
                        self.journal.append(result)
                    else:
                        await writer.append(result)
            finally:
                if key is not None:
                    self._in_flight.discard(key)
            envelope = outcome.envelope
            if plan.counts_output and isinstance(envelope, OkEnvelope):
                run.output_bytes += len(pydantic_core.to_json(envelope.data, fallback=repr))
            if not self._recorders:  # the record alone: no report to make
                output = envelope_json.get("data") if envelope.ok else envelope_json
                run.records.append(_wire.record(plan.tool_type, attempt.call.name, arguments, output))
                return envelope
            report = self._record(attempt, "ran", envelope, arguments, envelope_json, duration_ms)
            if report is not None:
                await self._tell(report)
            return envelope
        except Exception as e:  # a bug of ours must not reach the model as an exception either
            # a journal write that may have committed: the call is in doubt, and the model is told so
            envelope = (
                envelopes.in_doubt(call.name) if isinstance(e, OutcomeUnknown) else _internal_error(call.name)
            )
            attempt = Attempt(call, None, run, self.policy)
            trace = traceback.format_exc()
            if run.secrets is not None:  # a traceback quoting the call
                trace = run.secrets.text(trace)
            entry = self._entry("refusal", attempt, {}, _jsonable(envelope), trace=trace)
            with contextlib.suppress(Exception):  # the journal itself may be what failed
                await writer.append(entry)
            return envelope
        finally:
            writer.calls -= 1

    async def execute_all(
        self,
        calls: Sequence[ToolCall],
        run: Run | None = None,
        *,
        on_result: Callable[[int, AnyEnvelope], Awaitable[None] | None] | None = None,
    ) -> list[AnyEnvelope]:
        """Answer a batch of calls, returning envelopes in call order.

        Calls start in order of priority (higher first; the call's own, else its tool's); independent calls
        run concurrently up to `policy.max_concurrency`; a call to a `sequential` tool waits for every call
        started before it and runs alone. `on_result(index, envelope)` hears of each call as it is answered,
        in the call's task; what it returns, if not None, is awaited there (a plain function returning None
        when it has nothing to wait for saves a coroutine a call: the loop's, in a fan-out of 50 calls).
        """
        run = run if run is not None else Run()
        if len(calls) == 1:  # nothing to order or overlap: no closure, no list of slots
            envelope = await self.execute(calls[0], run)
            if on_result is not None and (pending := on_result(0, envelope)) is not None:
                await pending
            return [envelope]
        results: list[AnyEnvelope | None] = [None] * len(calls)

        async def answer(index: int) -> None:
            results[index] = envelope = await self.execute(calls[index], run)
            if on_result is not None and (pending := on_result(index, envelope)) is not None:
                await pending

        tools = [self.toolset.get(c.name) for c in calls]  # once a call, for its priority and ordering
        if any(t is not None and self._plan(t).secret for t in tools):  # before any runs: another may echo
            _learn_secrets(run, calls, tools)
        priorities = [_priority(call, tool) for call, tool in zip(calls, tools, strict=True)]
        if len(set(priorities)) <= 1:  # the usual batch: no priorities, the model's order
            order: Sequence[int] = range(len(calls))
        else:  # higher first; a stable sort keeps the model's order among equals
            order = sorted(range(len(calls)), key=priorities.__getitem__, reverse=True)
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

    def _plan(self, tool: Tool[..., Any] | None) -> _Plan:
        """How calls to `tool` go under the current policy, worked out once (see `_Plan`)."""
        found = self._plans.get(id(tool))
        if found is not None and found.tool is tool and found.policy is self.policy:
            return found
        if len(self._plans) > 4096:  # toolsets that make new tool objects as they go: stay bounded
            self._plans.clear()
        plan = self._plans[id(tool)] = _Plan(tool, self.policy, self.guards, self._domain_guards)
        return plan

    def _deadlines_here(self) -> Deadlines:
        """The executor's `Deadlines` on the running loop (made anew when it runs on another)."""
        deadlines = self._deadlines
        loop = asyncio.get_running_loop()
        if deadlines is None or deadlines.loop is not loop:
            deadlines = self._deadlines = Deadlines(loop)
        return deadlines

    async def _answered(self, attempt: Attempt) -> bool:
        """Whether the journal answers this call without running it (a repeat of a call whose result
        replays): then no domain guard asks about it, e.g. the CLI's `--confirm` does not ask the user again
        about a call that will not run. The idempotency guard still decides, after the other guards."""
        key = attempt.idempotency_key
        tool = attempt.tool
        if key is None or tool is None or not attempt.policy.idempotency:
            return False
        found = self.journal.lookup(key) if self._direct else await self._lookup(key)
        return found.status == "done" and replays(found.envelope, tool.spec.side_effects)

    async def _ask_after_claim(self, attempt: Attempt, plan: _Plan) -> AnyEnvelope | None:
        """The domain guards a call skipped because the journal was to answer it (`_answered`), asked now
        that its claim went through after all (the journal changed in between: another process, or an
        entry forgotten): None if they allow it; else their refusal, its intent settled as not run."""
        intent = attempt.intent
        assert intent is not None
        for guard, check_now, domain in plan.steps:
            if not domain:
                continue
            try:
                decision = None if check_now is None else check_now(attempt)
                if decision is None:
                    decision = await guard.check(attempt)
            except BaseException:  # the call never runs: its key goes (its intent in doubt, as after a crash)
                if attempt.idempotency_key is not None:
                    self._in_flight.discard(attempt.idempotency_key)
                raise
            if isinstance(decision, Allow):
                continue
            try:
                await self._writer.append(resolution(intent, envelope=None, note="refused by a guard"))
            finally:
                if attempt.idempotency_key is not None:
                    self._in_flight.discard(attempt.idempotency_key)
            return await self._refused(attempt, decision)
        return None

    async def _refused(self, attempt: Attempt, decision: Refuse | Replay) -> AnyEnvelope:
        """Answer a call a guard refused (`Refuse`, journaled) or answered from the journal (`Replay`)."""
        arguments = attempt.arguments()
        envelope, envelope_json = _settled(decision.envelope, None)
        known = attempt.run.secrets
        if (known is not None and known.forms) or (
            attempt.tool is not None and marks_secret(attempt.tool.spec)
        ):  # e.g. a message quoting an echo
            envelope_json, _ = echo_free(attempt.run, envelope, envelope_json, None, learn=False)
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

    @staticmethod
    def _arguments_for(attempt: Attempt, tool: Tool[..., Any], plan: _Plan) -> dict[str, Any] | ToolResult:
        """The tool's keyword arguments (its context injected); what failed, if making them did."""
        validated = attempt.validated
        assert validated is not None
        if plan.plain_kwargs and validated.values is not None and not validated.problems:
            return validated.values  # the validator's own dict, which nothing else holds
        call, run = attempt.call, attempt.run
        try:
            context = None
            if tool.context_parameter is not None:
                context = ToolContext(call, run.principal.id, run.principal.scopes, run.session_id, run.deps)
            return tool.call_arguments(validated, context)
        except Exception:
            return ToolResult(_internal_error(tool.name), traceback.format_exc())

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

    @staticmethod
    def _key(attempt: Attempt) -> str:
        """The call's idempotency key; for a keyed tool only (`_Plan.keyed`: a read-only tool without
        declared fields is not keyed, as reading again is harmless and a replay could be stale)."""
        assert attempt.tool is not None
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
            outcome, error_code = _outcome_and_code(envelope_json)
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
            attempt.annotations(),
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


class _Plan:
    """How calls to one tool go under one policy, worked out once: the guards that could refuse them (each
    with its `check_now`: no coroutine a guard a call) and what running the tool takes, so that the usual
    call goes straight through."""

    __slots__ = (
        *("counts_output", "keyed", "output_schema", "plain_kwargs", "policy", "starts_now", "steps"),
        *("secret", "timeout_s", "tool", "tool_type"),
    )

    def __init__(
        self,
        tool: Tool[..., Any] | None,
        policy: Policy,
        guards: Sequence[Guard],
        domain: Sequence[Guard],
    ) -> None:
        self.tool = tool
        self.policy = policy
        self.steps: tuple[_Step, ...] = tuple(
            (g, getattr(g, "check_now", None), any(g is d for d in domain))
            for g in guards
            if applies(g, tool, policy)
        )
        spec = tool.spec if tool is not None else None
        self.keyed = spec is not None and (spec.side_effects != "none" or bool(spec.idempotency_fields))
        """Whether calls get an idempotency key (`Executor._key`)."""
        self.tool_type = tool_type(spec)
        """Kalygo's `toolType` for its records."""
        timeout_ms = spec.sandbox.timeout_ms if spec is not None else None
        self.timeout_s = timeout_ms / 1000 if timeout_ms is not None else policy.default_timeout_s
        self.starts_now = (
            tool is not None
            and tool.function is not None
            and tool.is_async
            and tool.spec.sandbox.isolation != "process"
        )
        """An async tool run in this process: called, and awaited only if it waits (`_invoke.start`)."""
        self.plain_kwargs = tool is not None and tool.function is not None and tool.context_parameter is None
        """The validator's typed values are the keyword arguments as they are (no context to add)."""
        output_schema = spec.output_schema if spec is not None else None
        probe: dict[str, Any] = {}  # `redact` returns it itself iff the schema marks nothing secret
        self.output_schema = (
            output_schema if output_schema and redact(probe, output_schema) is not probe else None
        )
        """The output schema, for redaction: None when it marks nothing secret (no redaction to ask for)."""
        self.secret = spec is not None and marks_secret(spec)
        """Whether the tool's schemas mark anything secret (then the run learns their values, and its
        records lose their echoes; so do other tools', once the run knows a secret)."""
        self.counts_output = policy.max_output_bytes_per_run is not None
        """Whether the run's output bytes are counted (for the quota guard)."""


def _learn_secrets(run: Run, calls: Sequence[ToolCall], tools: Sequence[Tool[..., Any] | None]) -> None:
    """The values the calls' tools' input schemas mark secret, learned by the run (`Run.secrets`) before
    any of the calls runs: a call of the batch that starts first may echo another's."""
    known = run.known_secrets()
    for call, tool in zip(calls, tools, strict=True):
        if tool is not None:
            redacted = redact(call.arguments, tool.spec.input_schema)
            if redacted is not call.arguments:
                known.learn(call.arguments, redacted)


def _result_entry(
    intent: JournalEntry,
    envelope_json: dict[str, Any],
    trace: str | None,
    duration_ms: float,
    created_at: float,
    pid: int,
) -> JournalEntry:
    """The result entry of a call whose intent is `intent`: the intent's columns (the same call, run and
    arguments, which `Executor._entry` would make again), its outcome, when (`created_at`) and where (`pid`,
    this host) it ended."""
    outcome, error_code = _outcome_and_code(envelope_json)
    values: tuple[Any, ...] = (
        "result",
        intent.call_id,
        intent.tool,
        created_at,
        None,  # id: the journal's to set
        intent.id,  # intent_id
        intent.session_id,
        intent.run_id,
        intent.idempotency_key,
        intent.side_effects,
        intent.principal,
        intent.why,
        intent.arguments,
        intent.annotations,
        intent.repairs,
        intent.repaired,
        outcome,
        error_code,
        envelope_json,
        duration_ms,
        storable_text(trace) if trace is not None else None,
        pid,
        _HOST,
        None,  # note
        {},  # extra
    )
    if _ENTRY_IN_ORDER:
        return JournalEntry(*values)
    return JournalEntry(**dict(zip(_ENTRY_ORDER, values, strict=True)))


def _outcome_and_code(envelope_json: dict[str, Any]) -> tuple[Outcome, str | None]:
    """An envelope's `outcome` and `error_code` columns."""
    if envelope_json.get("ok") is True:
        return "ok", None
    error: Any = envelope_json.get("error")
    code = str(error["code"]) if isinstance(error, dict) else None  # pyright: ignore[reportUnknownArgumentType]
    return ("needs" if envelope_json.get("needs") is not None else "error"), code


def _priority(call: ToolCall, tool: Tool[..., Any] | None) -> int:
    if call.priority is not None:
        return call.priority
    return tool.spec.priority if tool is not None else 0


def _sequential(tool: Tool[..., Any] | None) -> bool:
    return tool is not None and tool.spec.sequential


def _jsonable(value: Any) -> Any:
    return pydantic_core.to_jsonable_python(value, fallback=repr)


def _settle(tool: Tool[..., Any], outcome: ToolResult, plan: _Plan) -> tuple[ToolResult, dict[str, Any]]:
    """The tool's outcome as the journal and the model get it, and its envelope's JSON (`_settled`)."""
    envelope = outcome.envelope
    if type(envelope) is OkEnvelope and plain_scalar(envelope.data):  # `_settled`'s usual case, inlined
        data = envelope.data
        schema = plan.output_schema
        return outcome, {"ok": True, "data": redact(data, schema) if schema else data}
    try:
        envelope, envelope_json = _settled(outcome.envelope, plan.output_schema)
        if envelope is not outcome.envelope:
            outcome = ToolResult(envelope, outcome.traceback)
    except Exception:  # the intent must get a result all the same, or it stays in doubt
        outcome = ToolResult(_internal_error(tool.name), traceback.format_exc())
        envelope_json = _jsonable(outcome.envelope)
    return outcome, envelope_json


def _settled(
    envelope: AnyEnvelope, output_schema: dict[str, Any] | None
) -> tuple[AnyEnvelope, dict[str, Any]]:
    """The envelope as every journal can store it and every model API carry it (`storable`: e.g. a lone
    surrogate in a tool's error message would fail both), and its JSON for the journal and the records, with
    what the output schema marks secret redacted from its data."""
    if type(envelope) is OkEnvelope and plain_scalar(envelope.data):  # the usual result: JSON, storable
        data: dict[str, Any] = {"ok": True, "data": envelope.data}
        if output_schema:
            data["data"] = redact(data["data"], output_schema)
        return envelope, data
    raw: dict[str, Any] = _jsonable(envelope)
    data = storable(raw)
    if data is not raw or (isinstance(envelope, OkEnvelope) and data["data"] != envelope.data):
        envelope = envelopes.from_json(data)  # e.g. NaN, which JSON (so the journal) has as null
    if output_schema and isinstance(envelope, OkEnvelope):
        data["data"] = redact(data.get("data"), output_schema)  # `data` is a fresh copy: no one else holds it
    return envelope, data


def _internal_error(name: str) -> ErrorEnvelope:
    return envelopes.internal(name, "tether hit an internal error")
