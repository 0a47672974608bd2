"""One run's event stream (seed 004's names): every event kept in order and handed to `on_event` at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tether.types import Event

__all__ = ["EventHandler", "Events"]

EventHandler = Callable[[Event], Awaitable[None] | None]


class Events:
    """The events of one run, in order. User-visible text is shown at once (talk first) or held until the
    turn's tools are done or need input (act first, `hold=True`)."""

    __slots__ = ("all", "held", "hold", "on_event", "run_id")

    def __init__(self, run_id: str, on_event: EventHandler | None):
        self.run_id = run_id
        self.on_event = on_event
        self.all: list[Event] = []
        self.hold = False
        self.held: list[Event] = []

    async def emit(self, event: Event) -> None:
        self.all.append(event)
        if self.on_event is not None:
            maybe = self.on_event(event)
            if maybe is not None:
                await maybe

    async def show(self, event: Event) -> None:
        """User-visible text: now (talk first), or held until `release()` (act first). (`emit`'s body written
        out again: a coroutine less for each text delta a model streams.)"""
        if self.hold:
            self.held.append(event)
            return
        self.all.append(event)
        if self.on_event is not None:
            maybe = self.on_event(event)
            if maybe is not None:
                await maybe

    async def release(self) -> None:
        held, self.held = self.held, []
        for event in held:
            await self.emit(event)
