"""What a guard decides about a call, as data: allow it, refuse it with an envelope, or replay a result."""

from __future__ import annotations

from dataclasses import dataclass

from tether import envelopes
from tether.tools import ValidatedCall
from tether.types import AnyEnvelope, ErrorCode, ErrorEnvelope

__all__ = ["Allow", "Decision", "Refuse", "Replay", "refusal"]


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
