"""One run's event stream (seed 004's names): every event kept in order and handed to `on_event` at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tether.types import Event, ToolStartEvent

if TYPE_CHECKING:
    from tether.loop._secrets import SecretsAtRest

__all__ = ["EventHandler", "Events"]

EventHandler = Callable[[Event], Awaitable[None] | None]


class Events:
    """The events of one run, in order. User-visible text is shown at once (talk first) or held until the
    turn's tools are done or need input (act first, `hold=True`). With `secrets`, every event is kept and
    handed out as `secrets.shown` makes it (secrets redacted: docs/sessions.md)."""

    __slots__ = ("all", "held", "hold", "on_event", "run_id", "secrets")

    def __init__(self, run_id: str, on_event: EventHandler | None, secrets: SecretsAtRest | None = None):
        self.run_id = run_id
        self.on_event = on_event
        self.secrets = secrets
        self.all: list[Event] = []
        self.hold = False
        self.held: list[Event] = []

    def emit(self, event: Event) -> Awaitable[None] | None:
        """Keep `event` and hand it to `on_event`; returns what is left to await (an async handler's
        coroutine, or the redactor's events), None when it is done. Not a coroutine itself: a run emits
        seven events or more, and the usual one (no async handler, nothing to hide) is done at once, where a
        coroutine a call costs ~0.15 µs. Callers await what it returns, when it returns anything."""
        secrets = self.secrets
        # asked only once it has something to hide, and of each call (which may be to a tool with secrets)
        if secrets is not None and (secrets.active or type(event) is ToolStartEvent):
            shown = secrets.shown(event)
            if type(shown) is tuple:  # (an event, a pydantic model, iterates too)
                return self._emit_all(shown)
        self.all.append(event)
        on_event = self.on_event
        return None if on_event is None else on_event(event)

    async def _emit_all(self, events: tuple[Event, ...]) -> None:
        for event in events:
            self.all.append(event)
            if self.on_event is not None:
                maybe = self.on_event(event)
                if maybe is not None:
                    await maybe

    async def flush(self) -> None:
        """Streamed text `secrets` holds back goes out, redacted: the run ends without another event to
        release it (cancelled, or a bug)."""
        if self.secrets is not None:
            await self._emit_all(self.secrets.release())

    def show(self, event: Event) -> Awaitable[None] | None:
        """User-visible text: now (talk first), or held until `release()` (act first); returns what is left
        to await, as `emit` does."""
        if self.hold:
            self.held.append(event)
            return None
        return self.emit(event)  # through `emit`: streamed text may hold a secret too

    async def release(self) -> None:
        held, self.held = self.held, []
        for event in held:
            if (pending := self.emit(event)) is not None:
                await pending
