"""Messages as a session store keeps them, and events as they leave a run: what a tool's schema marks secret
is never written or shown in clear.

The journal and the records redact the values a tool's input schema (or output schema) marks secret; a
session keeps the whole conversation, where the same values also stand in the model's own output (a text
dialect's `raw` call, the text around it) and may come back in tool results. So the copy that is stored has
each such value replaced by `***` wherever it appears: in the call's arguments by schema, and as text (plain,
JSON-escaped or HTML-escaped) in every string of the messages that follow in the run. The conversation in
memory, which the model reads during the run, keeps the values; a run resumed from the store reads `***`.

Events follow the same rule (`SecretsAtRest.shown`): every event a run hands to `on_event` is redacted the
same way, so whatever forwards them (`tether serve`'s stream, the terminal, a handler of the user's) shows
`***`. The model's streamed text is held back while its end could be the start of a known secret, so a value
split across chunks is redacted too. Only the tool (and the model, during the run) gets the values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tether import envelopes
from tether.tools import REDACTED, SecretText, redact
from tether.types import (
    AnyEnvelope,
    AssistantMessage,
    ChatModelStreamEvent,
    ErrorCode,
    Event,
    Message,
    OkEnvelope,
    Provenance,
    SystemMessage,
    ToolCall,
    ToolEndEvent,
    ToolResultMessage,
    ToolSpec,
    ToolStartEvent,
    UserMessage,
)

__all__ = ["SecretsAtRest", "describe_call", "refusals_for_redacted"]

_SAME: Any = object()
SpecOf = Callable[[str], ToolSpec | None]


class SecretsAtRest:
    """Redacts the messages a run stores in its session, or the events it hands out (`shown`), as the module
    says; remembers the secret values seen during the run, so an echo in a later message or event is
    redacted too. One instance does one job: the store's works in a worker thread.

    Args:
        spec_of: A tool's spec by name (its schemas say what is secret).
        known: Secret text known before the run (`Session.secrets`: what the user gave for a `needs`).
    """

    def __init__(self, spec_of: SpecOf, known: Iterable[str] = ()):
        self.spec_of = spec_of
        self.known = SecretText(known)
        self._names: dict[str, str] = {}
        """Tool names by call id, from `on_tool_start` (`on_tool_end` has only the id): of the calls whose
        tool's schemas mark something secret, or all once a secret is known."""
        self._marks: dict[str, bool] = {}
        """Whether a tool's schemas mark anything secret, by name."""
        self.active = bool(self.known.forms)
        """Whether an event may have something to hide: a secret is known, or a call to a tool whose schemas
        mark something secret was seen (until then only `on_tool_start` needs `shown`)."""
        self.held_text = ""
        """Streamed text held back: its end could be the start of a secret."""
        self._held_run: str | None = None
        self._before = ""
        """The last character of the streamed text shown."""

    @property
    def secrets(self) -> set[str]:
        """The secret values known so far, as text."""
        return self.known.values

    def __call__(self, messages: Sequence[Message]) -> list[Message]:
        """`messages` as they may be written to disk (the same objects when there is nothing to hide)."""
        return [self._message(m) for m in messages]

    def _message(self, message: Message) -> Message:
        known = self.known
        if isinstance(message, AssistantMessage):
            calls = [self._arguments(call) for call in message.tool_calls]
            if not known and all(a is c.arguments for c, a in calls):
                return message  # nothing secret (a secret `true` has no text to look for, but is redacted)
            return message.model_copy(
                update={
                    "content": known.text(message.content),
                    "reasoning": None if message.reasoning is None else known.text(message.reasoning),
                    "raw": None if message.raw is None else known.text(message.raw),
                    "tool_calls": tuple(self._call(call, arguments) for call, arguments in calls),
                }
            )
        if isinstance(message, ToolResultMessage):
            data = self._output(message.name, message.envelope)
            if not known and data is _SAME:
                return message
            envelope = message.envelope.model_dump(mode="json", exclude_none=True)
            if data is not _SAME:
                envelope["data"] = data
            return message.model_copy(update={"envelope": envelopes.from_json(known.json(envelope))})
        if not known:
            return message
        if isinstance(message, UserMessage):
            return UserMessage(content=known.text(message.content))
        return SystemMessage(content=known.text(message.content))

    def shown(self, event: Event) -> Event | tuple[Event, ...]:
        """`event` as it may leave the run: the event itself when it shows nothing secret, else a tuple of the
        events to hand out instead, in order (none while streamed text is held back; held text comes before
        the next event of another kind). While not `active`, only `on_tool_start` needs to be asked.

        `on_tool_start`'s call has its arguments redacted by the tool's input schema, `on_tool_end`'s
        envelope its data by the output schema; in every event, each secret value seen so far (or given in
        `known`) is replaced by `***` wherever it appears as text."""
        kind = type(event)
        known = self.known.forms  # () while no secret is known: the usual run, checked without a call
        if kind is ChatModelStreamEvent:
            if not known and not self.held_text:
                return event
            return self._stream(event)  # pyright: ignore[reportArgumentType]
        # held text waits past a call's start and end (a call the stream started splits the model's text)
        held = (
            self.release()
            if self.held_text and kind is not ToolStartEvent and kind is not ToolEndEvent
            else ()
        )
        # `type() is`, not `isinstance`: pydantic's metaclass checks instances in Python (~0.15 µs each)
        if kind is ToolStartEvent:
            start: ToolStartEvent = event  # pyright: ignore[reportAssignmentType] (the type was checked)
            name = start.call.name
            secret = known or self._marks.get(name)
            if secret is None:
                secret = self._marks[name] = _marks_secret(self.spec_of(name))
            if not secret:
                return event if not held else (*held, event)
            self.active = True
            shown = self._tool_start(start)
        elif kind is ToolEndEvent:
            end: ToolEndEvent = event  # pyright: ignore[reportAssignmentType] (the type was checked)
            shown = self._tool_end(end) if known or end.call_id in self._names else event
        elif known:
            shown = self._event_json(event)
        else:
            return event if not held else (*held, event)
        if held:
            return (*held, shown)
        return event if shown is event else (shown,)

    def _tool_start(self, event: ToolStartEvent) -> ToolStartEvent:
        call = event.call
        self._names[call.id] = call.name
        _, arguments = self._arguments(call)
        if not self.known.forms and arguments is call.arguments:
            return event
        shown = self._call(call, arguments)
        return event.model_copy(update={"call": shown, "data": describe_call(call.name, shown.arguments)})

    def _tool_end(self, event: ToolEndEvent) -> Event:
        name = self._names.get(event.call_id)
        data = _SAME if name is None else self._output(name, event.envelope)
        if not self.known.forms and data is _SAME:
            return event
        envelope = event.envelope.model_dump(mode="json", exclude_none=True)
        if data is not _SAME:
            envelope["data"] = data
        return self._event_json(event.model_copy(update={"envelope": envelopes.from_json(envelope)}))

    def _event_json(self, event: Event) -> Event:
        """Every secret taken out of the event's text (its keys too, unless that breaks its shape)."""
        dumped = event.model_dump(mode="json")
        try:
            return type(event).model_validate(self.known.json(dumped))
        except ValueError:  # a secret that is also a field's name (`ok`, `data`): keys kept as they are
            return type(event).model_validate(self.known.json(dumped, keys=False))

    def _stream(self, event: ChatModelStreamEvent) -> tuple[Event, ...]:
        shown, self.held_text = self.known.streamed(self.held_text + event.data, self._before)
        self._held_run = event.run_id
        if not shown:
            return ()
        self._before = shown[-1]
        return (event.model_copy(update={"data": shown}),)

    def release(self) -> tuple[Event, ...]:
        """The streamed text held back, redacted, now that the stream has paused (an event of another kind
        comes) or ended without one (the run was cancelled, or failed): held text goes out, never vanishes."""
        if not self.held_text:
            return ()
        text, self.held_text = self.known.ended(self.held_text, self._before), ""
        self._before = text[-1:]
        return (ChatModelStreamEvent(run_id=self._held_run, data=text),)

    def _arguments(self, call: ToolCall) -> tuple[ToolCall, dict[str, Any]]:
        """The call and its arguments redacted by its tool's input schema, learning the values taken out."""
        spec = self.spec_of(call.name)
        if spec is None:
            return call, call.arguments
        redacted = redact(call.arguments, spec.input_schema)
        if redacted is call.arguments or redacted == call.arguments:  # no secret given
            return call, call.arguments
        self.known.learn(call.arguments, redacted)
        return call, redacted

    def _output(self, name: str, envelope: AnyEnvelope) -> Any:
        """The result's data redacted by its tool's output schema (as the journal stores it), learning the
        values taken out; `_SAME` when the schema marks nothing secret."""
        if not isinstance(envelope, OkEnvelope):
            return _SAME
        spec = self.spec_of(name)
        if spec is None or not spec.output_schema:
            return _SAME
        redacted = redact(envelope.data, spec.output_schema)
        if redacted is envelope.data or redacted == envelope.data:
            return _SAME
        self.known.learn(envelope.data, redacted)
        return redacted

    def _call(self, call: ToolCall, arguments: dict[str, Any]) -> ToolCall:
        known = self.known
        provenance = call.provenance
        if provenance is not None and provenance.repairs:
            provenance = Provenance.model_validate(known.json(provenance.model_dump(mode="json")))
        return call.model_copy(
            update={
                "arguments": known.json(arguments),
                "why": None if call.why is None else known.text(call.why),
                "annotations": tuple(known.text(a) for a in call.annotations),
                "provenance": provenance,
            }
        )


def _marks_secret(spec: ToolSpec | None) -> bool:
    """Whether the tool's input or output schema marks anything secret (remembered per spec: specs are
    immutable)."""
    if spec is None:
        return False
    cached = _MARKS.get(id(spec))
    if cached is not None and cached[0] is spec:
        return cached[1]
    probe: dict[str, Any] = {}  # `redact` returns it itself iff the schema marks nothing secret
    marks = redact(probe, spec.input_schema) is not probe or (
        bool(spec.output_schema) and redact(probe, spec.output_schema) is not probe
    )
    if len(_MARKS) > 10_000:
        _MARKS.clear()
    _MARKS[id(spec)] = (spec, marks)
    return marks


_MARKS: dict[int, tuple[ToolSpec, bool]] = {}


def describe_call(name: str, inputs: dict[str, Any]) -> str:
    """Seed 004's `on_tool_start` line, to the letter: `Starting tool: search_docs with inputs: {'query':
    'ollama'}` (cut at 300 characters); `inputs` already redacted."""
    text = f"Starting tool: {name} with inputs: {inputs!r}"
    return text if len(text) <= 300 else text[:299] + "…"


def refusals_for_redacted(calls: Sequence[ToolCall]) -> dict[str, AnyEnvelope]:
    """Calls read back from a store with a value redacted in their arguments (a run resumed after a crash):
    they cannot run again, as `***` is not the value the model gave (a secret, or a secret's echo in a plain
    argument), and the journal cannot tell whether they ran (its key was made from that value). Each gets a
    `CONFLICT` envelope instead, by call id. (A model's own `***` in an argument is refused the same way:
    after a crash, refusing a call that may have run is the safe side.)"""
    refused: dict[str, AnyEnvelope] = {}
    for call in calls:
        if _carries_marker(call.arguments):
            refused[call.id] = envelopes.error(
                ErrorCode.CONFLICT,
                f"This {call.name} call was stored with secret values redacted (`{REDACTED}`) in its "
                "arguments when the run stopped; it is not run again, and whether it took effect is unknown.",
                recoverable=True,
                suggestion=(
                    "Check whether it took effect; call it again only with the real values (ask the user "
                    "for them if you no longer have them)."
                ),
                details={"redacted_at_rest": True},
            )
    return refused


def _carries_marker(value: Any) -> bool:
    if isinstance(value, str):
        return REDACTED in value
    if isinstance(value, dict):
        return any(_carries_marker(k) or _carries_marker(v) for k, v in value.items())  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list | tuple):
        return any(_carries_marker(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return False
