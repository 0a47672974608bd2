"""Runs decoupled from the HTTP responses that watch them: each run is a task with an event buffer.

A response only follows a buffer, so a client that drops its connection and comes back (with the last event
id it saw) replays what it missed and follows on. A run nobody watches any more is cancelled after a grace
period; a cancelled run answers every call it left open, so its session can take the next message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from sse_starlette.sse import AppStatus

from tether import envelopes
from tether.loop import Agent, Session, unanswered_calls
from tether.serve._index import LEASE_S, SessionIndex, Status
from tether.store import SessionStore
from tether.types import (
    ChainEndEvent,
    ChainStartEvent,
    ErrorEnvelope,
    ErrorEvent,
    Event,
    Message,
    NeedsEvent,
    SpeechEvent,
    ToolCall,
    ToolEndEvent,
    ToolResultMessage,
    ToolStartEvent,
)

__all__ = ["RunBuffer", "Runs"]

CANCELLED = "CANCELLED"
CANCEL_POLL_S = 1.0
"""How often a worker looks for cancellations asked of its runs through another worker."""
_RENEW_EVERY = round(LEASE_S / 3 / CANCEL_POLL_S)


class RunBuffer:
    """One run's events as JSON objects, numbered from 1, kept after the run ends for late readers."""

    def __init__(self, session_id: str):
        self.session_id = session_id
        self.events: list[dict[str, Any]] = []
        self.done = False
        self.task: asyncio.Task[None] | None = None
        self.watchers = 0
        self.orphaned: asyncio.TimerHandle | None = None
        self.run_id: str | None = None
        self.open_calls: dict[str, ToolCall] = {}
        """Calls started and not yet answered, by id: a cancelled run answers them."""
        self.needs = False
        self.end: dict[str, Any] | None = None
        """The run's `on_chain_end`, published last, once its session is released."""
        self.started = False
        self.cancelled = False
        self._changed = asyncio.Event()

    def push(self, event: Event) -> None:
        if isinstance(event, ChainStartEvent):
            self.run_id = event.run_id
        elif isinstance(event, ToolStartEvent):
            self.open_calls[event.call.id] = event.call
        elif isinstance(event, ToolEndEvent):
            self.open_calls.pop(event.call_id, None)
        elif isinstance(event, NeedsEvent):
            self.needs = True
        elif isinstance(event, ChainEndEvent):
            # held back until `finish`: a client that acts on `on_chain_end` finds its session released
            self.end = event.model_dump(mode="json")
            return
        self._publish(event.model_dump(mode="json"))

    def finish(self) -> None:
        if self.end is not None:
            self._publish(self.end)
        self.done = True
        self._changed.set()

    def _publish(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        self._changed.set()
        self._changed = asyncio.Event()

    async def follow(self, after: int = 0) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """`(seq, event)` for every event after `after`, then each new one as it comes, until the run ends."""
        seq = max(0, after)
        while True:
            while seq < len(self.events):
                seq += 1
                yield seq, self.events[seq - 1]
            if self.done:
                return
            await self._changed.wait()


class Runs:
    """The runs of this worker, by session: at most one at a time each (the index holds it across workers)."""

    def __init__(self, index: SessionIndex, store: SessionStore, *, grace_s: float, retain_s: float = 600.0):
        self.index = index
        self.store = store
        self.grace_s = grace_s
        self.retain_s = retain_s
        self.buffers: dict[str, RunBuffer] = {}
        """The current or last run of each session this worker ran, kept `retain_s` after it ends."""
        self._watcher: asyncio.Task[None] | None = None

    def start(self, session: Session, agent: Agent, prompt: str) -> RunBuffer:
        """Run `prompt` in `session` as a task; the caller has taken the session (`SessionIndex.hold`)."""
        buffer = RunBuffer(session.id)
        self.buffers[session.id] = buffer
        buffer.task = asyncio.create_task(self._drive(buffer, session, agent, prompt))
        if self._watcher is None:
            self._watcher = asyncio.create_task(self._watch())
        return buffer

    def cancel(self, session_id: str) -> bool:
        """Stop the session's run in this worker; False when none is running here."""
        buffer = self.buffers.get(session_id)
        if buffer is None or buffer.done or buffer.task is None:
            return False
        buffer.cancelled = True  # a task cancelled before its first step would skip its own cleanup
        if buffer.started:
            buffer.task.cancel()
        return True

    def watch(self, buffer: RunBuffer) -> None:
        buffer.watchers += 1
        if buffer.orphaned is not None:
            buffer.orphaned.cancel()
            buffer.orphaned = None

    def unwatch(self, buffer: RunBuffer) -> None:
        """A response stopped following the run: when none is left, the run is cancelled after the grace."""
        buffer.watchers -= 1
        if buffer.watchers == 0 and not buffer.done:
            loop = asyncio.get_running_loop()
            buffer.orphaned = loop.call_later(self.grace_s, self._orphan, buffer)

    def _orphan(self, buffer: RunBuffer) -> None:
        if buffer.watchers == 0:
            self.cancel(buffer.session_id)

    async def shutdown(self) -> None:
        """Cancel every run of this worker and wait until each has answered its calls and released its session."""
        tasks = [b.task for b in self.buffers.values() if b.task is not None and not b.done]
        for buffer in list(self.buffers.values()):
            self.cancel(buffer.session_id)
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._watcher is not None:
            self._watcher.cancel()

    async def _drive(self, buffer: RunBuffer, session: Session, agent: Agent, prompt: str) -> None:
        buffer.started = True
        status: Status = "idle"
        try:
            if buffer.cancelled:
                raise asyncio.CancelledError
            result = await agent.run(prompt, session=session, on_event=_for_clients(buffer))
            status = "needs" if buffer.needs else "error" if result.reason == "model_error" else "idle"
        except asyncio.CancelledError:
            with anyio.CancelScope(shield=True):
                await self._cancelled(buffer, session)
            status = "cancelled"
        except Exception as error:
            # a bug or a developer's mistake (a UserError): the stream still ends cleanly
            _end(buffer, "INTERNAL", f"{type(error).__name__}: {error}", "error")
            status = "error"
        finally:
            # a database failure here must not hang the stream: the session's hold then lapses with its lease
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await anyio.to_thread.run_sync(self.index.release, session.id, status)
            buffer.finish()
            asyncio.get_running_loop().call_later(self.retain_s, self._forget, buffer)

    def _forget(self, buffer: RunBuffer) -> None:
        if self.buffers.get(buffer.session_id) is buffer:
            del self.buffers[buffer.session_id]

    async def _watch(self) -> None:
        """While this worker has runs: renew their holds on their sessions, cancel those another worker was
        asked to cancel (one query a second for all of them), and cancel them all when the server is
        shutting down, so that every stream (NDJSON too) ends with `on_chain_end` before it is closed."""
        ticks = 0
        while running := [b.session_id for b in self.buffers.values() if not b.done]:
            await asyncio.sleep(CANCEL_POLL_S)
            ticks += 1
            if AppStatus.should_exit:  # uvicorn got SIGTERM or SIGINT (sse-starlette hooks its handler)
                for session_id in running:
                    self.cancel(session_id)
                continue
            with contextlib.suppress(Exception):  # a database hiccup: the next tick tries again
                if ticks % _RENEW_EVERY == 0:
                    await anyio.to_thread.run_sync(self.index.renew, running)
                for session_id in await anyio.to_thread.run_sync(self.index.cancel_asked, running):
                    self.cancel(session_id)
        self._watcher = None

    async def _cancelled(self, buffer: RunBuffer, session: Session) -> None:
        """Answer every call the run left open, store the answers the conversation needs, end the stream."""
        stored = unanswered_calls(session.messages)
        for call in [*buffer.open_calls.values(), *(c for c in stored if c.id not in buffer.open_calls)]:
            buffer.push(ToolEndEvent(run_id=buffer.run_id, call_id=call.id, envelope=_cancelled(call)))
        if stored:
            answers: list[Message] = [
                ToolResultMessage(call_id=c.id, name=c.name, envelope=_cancelled(c)) for c in stored
            ]
            session.messages.extend(answers)
            await anyio.to_thread.run_sync(self.store.append, session.id, answers)
        _end(buffer, CANCELLED, "The run was cancelled; the session keeps everything so far.", "cancelled")


def _end(buffer: RunBuffer, code: str, message: str, reason: str) -> None:
    """An `error` event, then `on_chain_end` (seed 004), unless the run already ended."""
    if buffer.end is not None:
        return
    buffer.push(ErrorEvent(run_id=buffer.run_id, data={"error": code, "message": message}))
    buffer.push(ChainEndEvent(run_id=buffer.run_id, reason=reason))


def _cancelled(call: ToolCall) -> ErrorEnvelope:
    return envelopes.error(
        CANCELLED,
        f"{call.name} was stopped before it finished: the run was cancelled.",
        recoverable=True,
        suggestion="Call it again if its result is still needed (check first whether it took effect).",
    )


def _for_clients(buffer: RunBuffer) -> Callable[[Event], None]:
    """`buffer.push`, minus what only means something on the server: a `say`'s audio is a WAV file in this
    server's temp directory (a client speaks the utterance itself), so the file is deleted and its path,
    which would tell clients about the server's file system, is not sent."""

    def push(event: Event) -> None:
        if isinstance(event, SpeechEvent) and event.audio is not None:
            with contextlib.suppress(OSError):
                os.unlink(event.audio)
            event = event.model_copy(update={"audio": None})
        buffer.push(event)

    return push
