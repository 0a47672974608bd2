"""One run's tool calls: which may start while the model streams, each through the right executor, each
announced (`on_tool_start`, `on_tool_end`, and the core tools' own events)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

import anyio

from tether import _wire, envelopes
from tether.execution import Executor, Run
from tether.loop._core import CORE_TOOL_NAMES
from tether.loop._events import Events
from tether.loop._offer import Offer
from tether.loop._secrets import describe_call
from tether.loop._speech import Speaker
from tether.tools import redact
from tether.types import (
    AnyEnvelope,
    ChatEvent,
    Event,
    NeedsEnvelope,
    NeedsEvent,
    OkEnvelope,
    OpenUrlEvent,
    ToolCall,
)

if TYPE_CHECKING:
    from tether.loop._agent import Agent

__all__ = ["Calls"]

OnResult = Callable[[int, AnyEnvelope], Awaitable[None] | None]
"""What hears of each call of a batch as it is answered (`Executor.execute_all`'s `on_result`): what it
returns, if not None, is awaited in the call's task."""


class Calls:
    """Runs the calls of one run, a model turn at a time: those without side effects as soon as the stream
    completes them (`schedule`), the rest once the turn's output is stored (`answer`)."""

    __slots__ = (
        "_tasks",
        "_waiting",
        "_wake",
        "agent",
        "answered",
        "events",
        "lags",
        "offer",
        "run",
        "spoken",
        "turn",
    )

    def __init__(self, agent: Agent, offer: Offer, run: Run, events: Events):
        self.agent = agent
        self.offer = offer
        self.run = run
        self.events = events
        self.spoken: Speaker | None = None
        """The run's speech, made at its first `say` call (most runs never speak)."""
        self.turn = 0
        """The model turn the calls belong to; the journal ids of calls are made unique with it."""
        self.answered: dict[str, AnyEnvelope] = {}
        """The current turn's calls that have their envelope, by call id."""
        self.lags: list[float] = []
        """For each call started while the model streamed: seconds from its completion in the stream."""
        self._tasks: list[asyncio.Task[None]] = []
        self._waiting: list[tuple[ToolCall, float]] = []
        """Calls scheduled and not started yet, with when the stream completed each."""
        self._wake: asyncio.Handle | None = None
        """The event loop's callback that starts the `_waiting` calls, while one is due."""

    def begin(self, turn: int) -> None:
        """A new model turn: nothing started, nothing answered (made anew only when the last turn used them:
        most turns start nothing while the model streams, and a run's last turn answers nothing)."""
        self.turn = turn
        if self.answered:
            self.answered = {}
        if self._tasks:
            self._tasks = []
        if self._waiting:
            self._waiting = []
        self._wake = None

    @property
    def speaker(self) -> Speaker:
        """The run's speech (`spoken`), made now if this is its first `say` call."""
        if self.spoken is None:
            self.spoken = Speaker(self.events)
        return self.spoken

    def streamable(self, call: ToolCall) -> bool:
        """Whether `call` may start while the model is still streaming."""
        return self.agent.streaming_execution and self.offer.streamable(call.name)

    def schedule(self, call: ToolCall) -> None:
        """Start `call` the next time the event loop runs, i.e. as soon as the stream waits for the model;
        one still waiting when the stream has ended runs with the turn's other calls instead (`answer`),
        which saves the hop through the event loop (plain asyncio tasks: an anyio task group costs ~25 µs a
        turn, a task ~5 µs).

        One callback starts every call scheduled before the event loop runs it, in order: a model that
        streams its calls in one burst (a fan-out) makes one handle, not one a call, and usually none
        runs (the stream ends before it waits, and `answer` takes the calls)."""
        self._waiting.append((call, time.monotonic()))
        if self._wake is None:
            self._wake = asyncio.get_running_loop().call_soon(self._start)

    def started(self) -> bool:
        """Whether a call of this turn has started."""
        return bool(self._tasks)

    def stream_ended(self) -> list[asyncio.Task[None]]:
        """The stream has ended: the calls it started, for the turn to wait for (those not started yet run
        with the turn's rest). Not a coroutine: most turns start nothing while the model streams."""
        self._unschedule()
        return self._tasks

    async def abandon(self) -> None:
        """The model failed or the run was cancelled: stop every call the stream started."""
        self._unschedule()
        for task in self._tasks:
            task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def answer(self, calls: Sequence[ToolCall]) -> list[AnyEnvelope]:
        """Answer the calls not started yet (all at once, as the executor's policy allows), and return the
        envelopes of all `calls` in order."""
        answered = self.answered
        later = [c for c in calls if c.id not in answered]
        if later:
            for call in later:
                if call.name == "say":
                    self.speaker.book(call)
                started = self.events.emit(_wire.tool_start(self.run.id, _describe(call, self.offer), call))
                if started is not None:
                    await started

            if len(later) == 1:  # the usual case: one call, straight to its executor (nothing to order)
                call = later[0]
                journaled = _wire.renamed(call, f"{call.id}@{self.turn}")  # as `_journaled` names it
                envelope = await self._executor(call).execute(journaled, self.run)
                answered[call.id] = envelope
                await self.finish(call, envelope)
                return [envelope] if len(calls) == 1 else [answered[c.id] for c in calls]

            def done(index: int, envelope: AnyEnvelope) -> Awaitable[None] | None:
                """`finish`, not a coroutine (none a call): what is left to await, which the executor awaits
                in the call's task, or None."""
                call = later[index]
                answered[call.id] = envelope
                return self._ended(call, envelope)

            journaled = _journaled(later, self.turn)
            if self.agent.core_executor is None:  # the usual case, without a coroutine more a turn
                await self.agent.executor.execute_all(journaled, self.run, on_result=done)
            else:
                await self._execute_all(journaled, done)
        return [answered[c.id] for c in calls]

    async def cut_off(self, calls: Sequence[ToolCall], why: str) -> list[AnyEnvelope]:
        """Envelopes for `calls` a limit stopped: those that finished keep theirs, the rest get `TIMEOUT`."""
        answers: list[AnyEnvelope] = []
        for call in calls:
            envelope = self.answered.get(call.id)
            if envelope is None:
                tool = self.agent.toolset.get(call.name)
                envelope = envelopes.stopped(call.name, tool.spec.side_effects if tool else None, why)
                await self.finish(call, envelope)
            answers.append(envelope)
        return answers

    async def finish(self, call: ToolCall, envelope: AnyEnvelope) -> None:
        """A call has its envelope: `on_tool_end`, then what it asks for (input, speech, chat, a page)."""
        if (pending := self._ended(call, envelope)) is not None:
            await pending

    def _ended(self, call: ToolCall, envelope: AnyEnvelope) -> Awaitable[None] | None:
        """`finish`, not a coroutine itself: what is left to await, None when all is done. The usual call
        (an ok envelope, no core tool) has only `on_tool_end` to send, and a fan-out of 50 calls would make
        50 coroutines for nothing."""
        pending = self.events.emit(_wire.tool_end(self.run.id, call.id, envelope))
        if type(envelope) is OkEnvelope and call.name not in CORE_TOOL_NAMES:
            return pending
        return self._asked(call, envelope, pending)

    async def _asked(self, call: ToolCall, envelope: AnyEnvelope, pending: Awaitable[None] | None) -> None:
        """The rest of `finish` once `on_tool_end` is sent (`pending`: what is left of it to await)."""
        if pending is not None:
            await pending
        events, run_id = self.events, self.run.id
        if type(envelope) is not OkEnvelope and isinstance(
            envelope, NeedsEnvelope
        ):  # (the ABC check, rarely)
            needs = NeedsEvent(run_id=run_id, call_id=call.id, needs=envelope.needs)
            if (pending := events.emit(needs)) is not None:
                await pending
        if call.name not in CORE_TOOL_NAMES:
            return
        ok = isinstance(envelope, OkEnvelope)
        shown: Event | None = None
        if call.name == "say":  # spoken alongside: the model's next turn does not wait for the speech
            self.speaker.answered(call, ok)
        elif ok and call.name == "send_chat":
            shown = ChatEvent(run_id=run_id, data=str(call.arguments.get("content", "")))
        elif ok and call.name == "open_url":
            shown = OpenUrlEvent(run_id=run_id, url=str(call.arguments.get("url", "")))
        if shown is not None and (pending := events.emit(shown)) is not None:
            await pending

    def _start(self) -> None:
        """The event loop's callback (`schedule`): start the waiting calls, in the order the stream made them."""
        waiting, self._waiting, self._wake = self._waiting, [], None
        tasks = self._tasks
        for call, completed_at in waiting:
            tasks.append(asyncio.create_task(self._execute(call, completed_at)))

    def _unschedule(self) -> None:
        """The stream has ended: calls not started yet are not (`answer` runs them with the turn's rest)."""
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
            self._waiting = []

    async def _execute(self, call: ToolCall, completed_at: float) -> None:
        self.lags.append(time.monotonic() - completed_at)
        if call.name == "say":  # before any await: streamed calls start in the order they were said
            self.speaker.book(call)
        started = self.events.emit(_wire.tool_start(self.run.id, _describe(call, self.offer), call))
        if started is not None:
            await started
        envelope = await self._executor(call).execute(_journaled([call], self.turn)[0], self.run)
        self.answered[call.id] = envelope
        await self.finish(call, envelope)

    def _executor(self, call: ToolCall) -> Executor:
        """The executor that runs `call`: the agent's, or the loop's for a core tool the agent's lacks."""
        agent = self.agent
        if agent.core_executor is not None and call.name in agent.core_routed:
            return agent.core_executor
        return agent.executor

    async def _execute_all(self, calls: list[ToolCall], on_result: OnResult) -> None:
        """A batch through the agent's executor, and the core tools it does not have through the loop's."""
        agent = self.agent
        core = agent.core_executor
        assert core is not None
        if not any(c.name in agent.core_routed for c in calls):
            await agent.executor.execute_all(calls, self.run, on_result=on_result)
            return
        for executor, indices in (
            (core, [i for i, c in enumerate(calls) if c.name in agent.core_routed]),
            (agent.executor, [i for i, c in enumerate(calls) if c.name not in agent.core_routed]),
        ):

            def answered(
                n: int, envelope: AnyEnvelope, indices: list[int] = indices
            ) -> Awaitable[None] | None:
                return on_result(indices[n], envelope)

            if indices:
                await executor.execute_all([calls[i] for i in indices], self.run, on_result=answered)


def _journaled(calls: Sequence[ToolCall], turn: int) -> list[ToolCall]:
    """The calls as the executor sees them: ids made unique in the conversation by the turn that made them.

    Text dialects number their calls from `call_0` in every turn and models reuse their own ids (`c1`), but
    the journal keys repeats by call id: the same id in a later turn is a new call. The number is derived
    from the conversation, so `resume` after a crash finds the same ids in the journal.
    """
    return [_wire.renamed(call, f"{call.id}@{turn}") for call in calls]


def _describe(call: ToolCall, offer: Offer) -> str:
    """Seed 004's line, to the letter: `Starting tool: search_docs with inputs: {'query': 'ollama'}`; what
    the tool's input schema marks secret shows as `'***'`, as in the journal."""
    if offer.secret_free:  # no schema marks anything: `redact` would return the arguments themselves
        return describe_call(call.name, call.arguments)
    spec = offer.index.get(call.name)
    return describe_call(
        call.name, call.arguments if spec is None else redact(call.arguments, spec.input_schema)
    )
