"""The one place envelopes are made: every answer a model gets to a tool call is built here.

    ok(data)                                   {ok: true, data}
    needs({"duration": True})                  {ok: false, needs}
    error(code, message, recoverable=..., suggestion=...)
                                               {ok: false, error: {code, message, recoverable, suggestion}}
    from_signal(ToolError(...) | NeedsInput(...))   what a tool's signal asks for
    timed_out(...) / stopped(...)              `TIMEOUT`: a call's own timeout, or a run that stopped it
    internal(name, what)                       `INTERNAL`, safe to show a model (the traceback stays in the
                                               journal)
    in_doubt(name)                             `INTERNAL`: whether the call took effect is unknown (its
                                               journal write may or may not have committed)
    from_json(data)                            an envelope recorded as JSON, e.g. in the journal

The types themselves (`OkEnvelope`, `NeedsEnvelope`, `ErrorEnvelope`, `AnyEnvelope`) live in `tether.types`;
this module imports nothing of tether's but them and the exceptions, so every layer can use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from tether.exceptions import NeedsInput, ToolError
from tether.types import AnyEnvelope, ErrorCode, ErrorEnvelope, ErrorInfo, NeedsEnvelope, OkEnvelope

__all__ = [
    "DEFAULT_SUGGESTIONS",
    "error",
    "from_json",
    "from_signal",
    "in_doubt",
    "internal",
    "needs",
    "ok",
    "stopped",
    "stopped_suggestion",
    "timed_out",
]

DEFAULT_SUGGESTIONS: dict[str, str] = {
    ErrorCode.NOT_FOUND: "Check the name or path (list what exists first), then call again with one that exists.",
    ErrorCode.PERMISSION_DENIED: "Use a path or resource inside what you are allowed to touch, or ask the user.",
    ErrorCode.TIMEOUT: "Try a smaller or simpler request, or tell the user it is taking too long.",
    ErrorCode.INVALID_ARGS: "Fix the arguments as the message says and call again.",
    ErrorCode.MISSING_WHY: "Add `why`: one sentence saying what you are trying to accomplish.",
    ErrorCode.QUOTA_EXCEEDED: "Reduce the scope of the request, or answer with what you have.",
    ErrorCode.UNAUTHORIZED: "Tell the user they need to sign in (or connect their account) to do this.",
    ErrorCode.SCOPES_MISSING: "Tell the user which permission is missing and ask them to grant it.",
    ErrorCode.CONNECTION_INACTIVE: "Tell the user the connection is not active and ask them to reconnect first.",
    ErrorCode.RATE_LIMITED: "Wait a little before calling this tool again, or do something else first.",
    ErrorCode.CONFLICT: "Do not repeat the call; check the current state first, then decide.",
    ErrorCode.INTERNAL: "Do not retry this call as it is; try another way, or tell the user the tool failed.",
}
"""What a model can do about each error code, for tools that raise `ToolError` without a suggestion."""

_new = object.__new__
_set = object.__setattr__
# BaseModel's slots, set through their descriptors (a third cheaper than `object.__setattr__` by name)
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def ok(data: Any = None) -> OkEnvelope:
    """`{ok: true, data}`; `data` must already be JSON values.

    Made as `OkEnvelope(data=data)` makes it, without running its validator: `data` is `Any` and `ok` its
    default, so validation would check nothing (~0.8 µs a call saved; `tests/test_envelopes.py` compares
    the two)."""
    made = _new(OkEnvelope)
    _set(made, "__dict__", {"ok": True, "data": data})
    _set_fields_set(made, {"data"})
    _set_extra(made, None)
    _set_private(made, None)
    return made


def needs(fields: Mapping[str, bool | str]) -> NeedsEnvelope:
    """`{ok: false, needs}`: each missing field -> `True`, or the question to ask the user."""
    return NeedsEnvelope(needs=dict(fields))


def error(
    code: ErrorCode | str,
    message: str,
    *,
    recoverable: bool,
    suggestion: str | None = None,
    details: dict[str, Any] | None = None,
) -> ErrorEnvelope:
    """`{ok: false, error: {code, message, recoverable, suggestion, details}}`."""
    info = ErrorInfo(
        code=str(code), message=message, recoverable=recoverable, suggestion=suggestion, details=details
    )
    return ErrorEnvelope(error=info)


def from_signal(signal: ToolError | NeedsInput) -> NeedsEnvelope | ErrorEnvelope:
    """The envelope a tool's `ToolError` or `NeedsInput` asks for; a `ToolError` without a suggestion gets the
    default one for its code. Raises `ValueError` if the signal's fields cannot make one (e.g.
    `NeedsInput(missing=["date"])`)."""
    if isinstance(signal, NeedsInput):
        return needs(signal.needs)
    suggestion = signal.suggestion if signal.suggestion is not None else DEFAULT_SUGGESTIONS.get(signal.code)
    return error(signal.code, signal.message, recoverable=signal.recoverable, suggestion=suggestion)


def stopped_suggestion(side_effects: str | None) -> str:
    """What to do about a call stopped before it finished (its own timeout, or the run's time limit)."""
    if side_effects == "mutating":
        return "It may have partly taken effect: check before trying again, and tell the user if you cannot."
    return "Try a smaller or simpler request (narrower scope, less input), or tell the user it is slow."


def timed_out(
    name: str, timeout_s: float | None, side_effects: str | None, *, stopped: bool
) -> ErrorEnvelope:
    """`TIMEOUT` for a call that outlived its own timeout; `stopped=False` for a sync tool's thread, which
    cannot be stopped (the message says so rather than claim it was)."""
    what = "was stopped" if stopped else "could not be stopped (a thread), so it may still be running"
    return error(
        ErrorCode.TIMEOUT,
        f"{name} did not finish within {timeout_s:g} s and {what}.",
        recoverable=True,
        suggestion=stopped_suggestion(side_effects),
        details={"timeout_s": timeout_s},
    )


def stopped(name: str, side_effects: str | None, why: str) -> ErrorEnvelope:
    """`TIMEOUT` for a call its run stopped before it finished (e.g. the run's time limit), saying `why`."""
    message = f"{name} was stopped before it finished: {why}."
    return error(ErrorCode.TIMEOUT, message, recoverable=True, suggestion=stopped_suggestion(side_effects))


def internal(name: str, what: str) -> ErrorEnvelope:
    """`INTERNAL`: `{name} failed: {what}.`, safe to show a model; the details belong in the journal."""
    return error(
        ErrorCode.INTERNAL,
        f"{name} failed: {what}. The details are in the audit journal.",
        recoverable=False,
        suggestion=DEFAULT_SUGGESTIONS[ErrorCode.INTERNAL],
    )


def in_doubt(name: str) -> ErrorEnvelope:
    """`INTERNAL` for a call whose journal write failed at or after its commit: the call may or may not have
    taken effect, and it is held in doubt (a repeat is refused) until an operator resolves it."""
    return error(
        ErrorCode.INTERNAL,
        f"{name} may or may not have taken effect: the audit journal lost track of it while recording it, so "
        "it is held in doubt and will not be repeated automatically.",
        recoverable=False,
        suggestion=(
            "Do not retry. Tell the user this action may or may not have happened and needs checking; an "
            "operator can resolve it (`tether audit resolve`)."
        ),
        details={"in_doubt": True},
    )


def from_json(data: Mapping[str, Any]) -> AnyEnvelope:
    """The envelope recorded as `data` (an envelope's JSON, e.g. from the journal)."""
    if data.get("ok") is True:
        return OkEnvelope.model_validate(data)
    if data.get("needs") is not None:
        return NeedsEnvelope.model_validate(data)
    return ErrorEnvelope.model_validate(data)
