"""What a guard decides about a call, as data: allow it, refuse it with an envelope, or replay a result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tether import envelopes
from tether.tools import ValidatedCall
from tether.types import AnyEnvelope, ErrorCode, ErrorEnvelope

__all__ = ["Allow", "Decision", "Refuse", "Replay", "allowed", "refusal"]

_new: Any = object.__new__


@dataclass(frozen=True, slots=True)
class Allow:
    """The call may go on to the next guard."""

    validated: ValidatedCall | None = None
    """Set by the schema guard: the call as it will run (coerced, `why` split out)."""


@dataclass(frozen=True, slots=True)
class Refuse:
    """The call must not run; `envelope` is the answer the model gets."""

    envelope: ErrorEnvelope


@dataclass(frozen=True, slots=True)
class Replay:
    """The call already ran; `envelope` is its recorded result, returned without running the tool again."""

    envelope: AnyEnvelope


Decision = Allow | Refuse | Replay

_set_validated = Allow.__dict__["validated"].__set__  # the slot's own descriptor, past the frozen check


def allowed(validated: ValidatedCall) -> Allow:
    """`Allow(validated=validated)`, the same value, without the frozen dataclass's `__init__` (~0.2 µs: the
    schema guard makes one for every call)."""
    made = _new(Allow)
    _set_validated(made, validated)
    return made


def refusal(
    code: ErrorCode | str,
    message: str,
    *,
    recoverable: bool,
    suggestion: str | None,
    details: dict[str, object] | None = None,
) -> Refuse:
    """A `Refuse` carrying `{ok: false, error: {code, message, recoverable, suggestion, details}}`."""
    return Refuse(
        envelopes.error(code, message, recoverable=recoverable, suggestion=suggestion, details=details)
    )
