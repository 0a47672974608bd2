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

import html
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tether import envelopes
from tether.tools import REDACTED, redact
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
_WORD = "0-9A-Za-z_"
_LONG = 8
"""A secret at least this long is replaced wherever it occurs; a shorter one only as a whole word, so a PIN
`1234` does not eat into `12345` (nor a one-letter value into every word)."""


class SecretsAtRest:
    """Redacts the messages a run stores in its session (see the module); remembers the secret values seen
    during the run, so an echo in a later message is redacted too.

    Args:
        spec_of: A tool's spec by name (its schemas say what is secret).
        known: Secret text known before the run (`Session.secrets`: what the user gave for a `needs`).
    """

    def __init__(self, spec_of: SpecOf, known: Iterable[str] = ()):
        self.spec_of = spec_of
        self.secrets: set[str] = {s for s in known if s.strip() and s != REDACTED}
        self._pattern: re.Pattern[str] | None = None
        self._streamed: re.Pattern[str] | None = None
        """`_pattern`, but a short secret only with a character after it (the stream's next chunk may go on)."""
        self._forms: tuple[str, ...] = ()
        self._names: dict[str, str] = {}
        """Tool names by call id, from `on_tool_start` (`on_tool_end` has only the id)."""
        self._pending = ""
        """Streamed text held back: its end could be the start of a secret."""
        self._pending_run: str | None = None
        if self.secrets:
            self._compile()

    def __call__(self, messages: Sequence[Message]) -> list[Message]:
        """`messages` as they may be written to disk (the same objects when there is nothing to hide)."""
        return [self._message(m) for m in messages]

    def _message(self, message: Message) -> Message:
        if isinstance(message, AssistantMessage):
            calls = [self._arguments(call) for call in message.tool_calls]
            if self._pattern is None and all(a is c.arguments for c, a in calls):
                return message  # nothing secret (a secret `true` has no text to look for, but is redacted)
            return message.model_copy(
                update={
                    "content": self._text(message.content),
                    "reasoning": None if message.reasoning is None else self._text(message.reasoning),
                    "raw": None if message.raw is None else self._text(message.raw),
                    "tool_calls": tuple(self._call(call, arguments) for call, arguments in calls),
                }
            )
        if isinstance(message, ToolResultMessage):
            data = self._output(message)
            if self._pattern is None and data is _SAME:
                return message
            envelope = message.envelope.model_dump(mode="json", exclude_none=True)
            if data is not _SAME:
                envelope["data"] = data
            return message.model_copy(update={"envelope": envelopes.from_json(self._json(envelope))})
        if self._pattern is None:
            return message
        if isinstance(message, UserMessage):
            return UserMessage(content=self._text(message.content))
        return SystemMessage(content=self._text(message.content))

    def shown(self, event: Event) -> Event | tuple[Event, ...]:
        """`event` as it may leave the run: the event itself when it shows nothing secret, else a tuple of the
        events to hand out instead, in order (none while streamed text is held back; held text before any other event).

        `on_tool_start`'s call has its arguments redacted by the tool's input schema, `on_tool_end`'s
        envelope its data by the output schema; in every event, each secret value seen so far (or given in
        `known`) is replaced by `***` wherever it appears as text."""
        kind = type(event)
        if kind is ChatModelStreamEvent:
            if self._pattern is None and not self._pending:
                return event
            return self._stream(event)  # pyright: ignore[reportArgumentType]
        held = self._flush()
        if kind is ToolStartEvent:
            shown = self._tool_start(event)  # pyright: ignore[reportArgumentType]
        elif kind is ToolEndEvent:
            shown = self._tool_end(event)  # pyright: ignore[reportArgumentType]
        elif self._pattern is not None:
            shown = self._event_json(event)
        else:
            shown = event
        return event if shown is event and not held else (*held, shown)

    def _tool_start(self, event: ToolStartEvent) -> ToolStartEvent:
        call = event.call
        self._names[call.id] = call.name
        _, arguments = self._arguments(call)
        if self._pattern is None and arguments is call.arguments:
            return event
        shown = self._call(call, arguments)
        return event.model_copy(update={"call": shown, "data": describe_call(call.name, shown.arguments)})

    def _tool_end(self, event: ToolEndEvent) -> Event:
        name = self._names.get(event.call_id)
        data = _SAME if name is None else self._output_of(name, event.envelope)
        if self._pattern is None and data is _SAME:
            return event
        envelope = event.envelope.model_dump(mode="json", exclude_none=True)
        if data is not _SAME:
            envelope["data"] = data
        return self._event_json(event.model_copy(update={"envelope": envelopes.from_json(envelope)}))

    def _event_json(self, event: Event) -> Event:
        """Every secret taken out of the event's text (its keys too, unless that breaks its shape)."""
        dumped = event.model_dump(mode="json")
        try:
            return type(event).model_validate(self._json(dumped))
        except ValueError:  # a secret that is also a field's name (`ok`, `data`): keys kept as they are
            return type(event).model_validate(self._json(dumped, keys=False))

    def _stream(self, event: ChatModelStreamEvent) -> tuple[Event, ...]:
        text = self._pending + event.data
        streamed = self._streamed
        if streamed is not None:
            text = streamed.sub(REDACTED, text)
        keep = _partial(text, self._forms)
        self._pending, self._pending_run = text[len(text) - keep :] if keep else "", event.run_id
        out = text[: len(text) - keep]
        return (event.model_copy(update={"data": out}),) if out else ()

    def _flush(self) -> tuple[Event, ...]:
        """The streamed text held back, now that the stream has paused (another event comes)."""
        if not self._pending:
            return ()
        text, self._pending = self._text(self._pending), ""
        return (ChatModelStreamEvent(run_id=self._pending_run, data=text),)

    def _arguments(self, call: ToolCall) -> tuple[ToolCall, dict[str, Any]]:
        """The call and its arguments redacted by its tool's input schema, learning the values taken out."""
        spec = self.spec_of(call.name)
        if spec is None:
            return call, call.arguments
        redacted = redact(call.arguments, spec.input_schema)
        if redacted is call.arguments or redacted == call.arguments:  # no secret given
            return call, call.arguments
        self._learn(call.arguments, redacted)
        return call, redacted

    def _output(self, message: ToolResultMessage) -> Any:
        return self._output_of(message.name, message.envelope)

    def _output_of(self, name: str, envelope: AnyEnvelope) -> Any:
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
        self._learn(envelope.data, redacted)
        return redacted

    def _call(self, call: ToolCall, arguments: dict[str, Any]) -> ToolCall:
        provenance = call.provenance
        if provenance is not None and provenance.repairs:
            provenance = Provenance.model_validate(self._json(provenance.model_dump(mode="json")))
        return call.model_copy(
            update={
                "arguments": self._json(arguments),
                "why": None if call.why is None else self._text(call.why),
                "annotations": tuple(self._text(a) for a in call.annotations),
                "provenance": provenance,
            }
        )

    def _learn(self, original: Any, redacted: Any) -> None:
        """Remember the values `redact` took out of `original` (its result is `redacted`)."""
        before = len(self.secrets)
        _taken(original, redacted, self.secrets)
        if len(self.secrets) != before:
            self._compile()

    def _compile(self) -> None:
        forms = _forms(self.secrets)
        self._forms = tuple(forms)
        self._pattern = _pattern(forms)
        self._streamed = _pattern(forms, going_on=True)

    def _text(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(REDACTED, text)

    def _json(self, value: Any, *, keys: bool = True) -> Any:
        """`value` (JSON) with every secret taken out of its strings and keys (with `keys`), and secret
        numbers replaced."""
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, dict):
            items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
            return {(self._text(k) if keys else k): self._json(v, keys=keys) for k, v in items.items()}
        if isinstance(value, list | tuple):
            return [self._json(v, keys=keys) for v in value]  # pyright: ignore[reportUnknownVariableType]
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and json.dumps(value) in self.secrets
        ):
            return REDACTED
        return value


def _taken(original: Any, redacted: Any, into: set[str]) -> None:
    if isinstance(redacted, str) and redacted == REDACTED and original != REDACTED:
        _leaves(original, into)
    elif isinstance(original, dict) and isinstance(redacted, dict):
        for key, value in original.items():  # pyright: ignore[reportUnknownVariableType]
            _taken(value, redacted.get(key), into)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    elif isinstance(original, list) and isinstance(redacted, list):
        for value, after in zip(original, redacted, strict=False):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            _taken(value, after, into)


def _leaves(value: Any, into: set[str]) -> None:
    """Every scalar of a secret value, as text (a secret object's strings and numbers are all secret)."""
    if isinstance(value, str):
        if value.strip() and value != REDACTED:
            into.add(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        into.add(json.dumps(value))
    elif isinstance(value, dict):
        for item in value.values():  # pyright: ignore[reportUnknownVariableType]
            _leaves(item, into)
    elif isinstance(value, list | tuple):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            _leaves(item, into)


def describe_call(name: str, inputs: dict[str, Any]) -> str:
    """Seed 004's `on_tool_start` line, to the letter: `Starting tool: search_docs with inputs: {'query':
    'ollama'}` (cut at 300 characters); `inputs` already redacted."""
    text = f"Starting tool: {name} with inputs: {inputs!r}"
    return text if len(text) <= 300 else text[:299] + "…"


def _forms(secrets: set[str]) -> list[str]:
    """Every form of every secret: as written, JSON-escaped (ASCII or not), HTML-escaped; longest first."""
    forms: set[str] = set()
    for secret in secrets:
        forms |= {
            secret,
            json.dumps(secret)[1:-1],
            json.dumps(secret, ensure_ascii=False)[1:-1],
            html.escape(secret),
        }
    return sorted(forms, key=len, reverse=True)


def _pattern(forms: list[str], *, going_on: bool = False) -> re.Pattern[str]:
    """One regex for all `forms`; with `going_on`, a short one matches only with a character after it
    (text that may go on: at its end, the next chunk could make it part of a longer word)."""
    after = rf"(?=[^{_WORD}])" if going_on else rf"(?![{_WORD}])"
    alternatives = [
        re.escape(form) if len(form) >= _LONG else rf"(?<![{_WORD}]){re.escape(form)}{after}"
        for form in forms
    ]
    return re.compile("|".join(alternatives))


def _partial(text: str, forms: Sequence[str]) -> int:
    """How many characters at the end of `text` could begin a secret (the longest such end): a long form's
    proper prefix, a short form's prefix or the whole of it (whether a word goes on is not known yet)."""
    longest = 0
    for form in forms:
        most = min(len(text), len(form) if len(form) < _LONG else len(form) - 1)
        for size in range(most, longest, -1):
            if text.endswith(form[:size]):
                longest = size
                break
    return longest


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
