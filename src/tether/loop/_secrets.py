"""Messages as a session store keeps them: what a tool's schema marks secret is never written in clear.

The journal and the records redact the values a tool's input schema (or output schema) marks secret; a
session keeps the whole conversation, where the same values also stand in the model's own output (a text
dialect's `raw` call, the text around it) and may come back in tool results. So the copy that is stored has
each such value replaced by `***` wherever it appears: in the call's arguments by schema, and as text (plain,
JSON-escaped or HTML-escaped) in every string of the messages that follow in the run. The conversation in
memory, which the model reads during the run, keeps the values; a run resumed from the store reads `***`.
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
    ErrorCode,
    Message,
    OkEnvelope,
    Provenance,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)

__all__ = ["SecretsAtRest", "refusals_for_redacted"]

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
        self._pattern: re.Pattern[str] | None = _pattern(self.secrets) if self.secrets else None

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
        """The result's data redacted by its tool's output schema (as the journal stores it), learning the
        values taken out; `_SAME` when the schema marks nothing secret."""
        envelope = message.envelope
        if not isinstance(envelope, OkEnvelope):
            return _SAME
        spec = self.spec_of(message.name)
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
            self._pattern = _pattern(self.secrets)

    def _text(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(REDACTED, text)

    def _json(self, value: Any) -> Any:
        """`value` (JSON) with every secret taken out of its strings and keys, and secret numbers replaced."""
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, dict):
            return {self._text(k): self._json(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        if isinstance(value, list | tuple):
            return [self._json(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
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


def _pattern(secrets: set[str]) -> re.Pattern[str]:
    """One regex for every form of every secret: as written, JSON-escaped (ASCII or not), HTML-escaped."""
    forms: set[str] = set()
    for secret in secrets:
        forms |= {
            secret,
            json.dumps(secret)[1:-1],
            json.dumps(secret, ensure_ascii=False)[1:-1],
            html.escape(secret),
        }
    alternatives = [
        re.escape(form) if len(form) >= _LONG else rf"(?<![{_WORD}]){re.escape(form)}(?![{_WORD}])"
        for form in sorted(forms, key=len, reverse=True)
    ]
    return re.compile("|".join(alternatives))


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
