"""Google's failures as envelopes the model can act on, built in one place.

401                         -> UNAUTHORIZED, with `details.needs` asking the user to re-authorise
403 insufficient scopes     -> SCOPES_MISSING (naming the scope and the command that grants it)
403 rate limits             -> RATE_LIMITED (Google reports per-user quotas as 403)
403 otherwise               -> PERMISSION_DENIED
404 / 410                   -> NOT_FOUND
409                         -> CONFLICT
429, 5xx                    -> RATE_LIMITED, recoverable, `details.retry_after_s` from `Retry-After`
other 4xx                   -> INVALID_ARGS with Google's own message
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar, cast

from tether import envelopes
from tether.exceptions import UserError
from tether.types import ErrorCode, ErrorEnvelope

__all__ = [
    "GoogleFailure",
    "envelope_for_status",
    "error_envelope",
    "missing_extra",
    "reauth_envelope",
    "translating",
]

P = ParamSpec("P")
R = TypeVar("R")

_DEFAULT_RETRY_AFTER_S = 1.0
_RATE_REASONS = frozenset(
    {"rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded", "RATE_LIMIT_EXCEEDED"}
)
_SCOPE_REASONS = frozenset({"insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"})


class GoogleFailure(Exception):
    """Raised inside the pack to answer a call with `envelope` (turned into the tool's result by `translating`)."""

    def __init__(self, envelope: ErrorEnvelope):
        super().__init__(envelope.error.message)
        self.envelope = envelope


def missing_extra(error: ImportError) -> UserError:
    """What to tell a developer who uses the pack without its extra."""
    return UserError(
        f"The google pack needs the google extra ({error.name} is missing): pip install 'tether[google]'."
    )


def error_envelope(
    code: str,
    message: str,
    *,
    recoverable: bool,
    suggestion: str | None = None,
    details: dict[str, Any] | None = None,
) -> ErrorEnvelope:
    return envelopes.error(code, message, recoverable=recoverable, suggestion=suggestion, details=details)


def reauth_envelope(message: str, scopes: Iterable[str]) -> ErrorEnvelope:
    """UNAUTHORIZED carrying seed 002's re-auth control: what to ask the user, and the command that does it."""
    wanted = sorted(scopes)
    command = "tether auth google" + "".join(f" --scope {s}" for s in wanted)
    return error_envelope(
        ErrorCode.UNAUTHORIZED,
        message,
        recoverable=False,
        suggestion="Do not retry. Ask the user to reconnect their Google account, then try again.",
        details={
            "needs": {"google_reauth": "Please reconnect your Google account so I can continue."},
            "reauth": {"provider": "google", "scopes": wanted, "command": command},
        },
    )


def envelope_for_status(
    status: int, reason: str, message: str, retry_after: str | None, scopes: Iterable[str]
) -> ErrorEnvelope:
    """The envelope for an HTTP error from Google (see the module's table)."""
    if status == 401:
        return reauth_envelope(f"Google refused the saved sign-in: {message}", scopes)
    if status == 429 or status >= 500 or (status == 403 and reason in _RATE_REASONS):
        wait = _seconds(retry_after)
        return error_envelope(
            ErrorCode.RATE_LIMITED,
            f"Google is busy or limiting requests ({status}): {message}",
            recoverable=True,
            suggestion=f"Wait {wait:g} seconds, then retry the same call.",
            details={"retry_after_s": wait, "status": status},
        )
    if status == 403 and (reason in _SCOPE_REASONS or "scope" in message.lower()):
        wanted = sorted(scopes)
        return error_envelope(
            ErrorCode.SCOPES_MISSING,
            f"The Google sign-in lacks the permission this needs: {message}",
            recoverable=False,
            suggestion="Do not retry. Ask the user to grant it: "
            + "tether auth google"
            + "".join(f" --scope {s}" for s in wanted),
            details={"missing_scopes": wanted},
        )
    if status == 403:
        return error_envelope(
            ErrorCode.PERMISSION_DENIED,
            f"Google denied access: {message}",
            recoverable=False,
            suggestion="Do not retry. Tell the user this item is not shared with their account.",
        )
    if status in (404, 410):
        return error_envelope(
            ErrorCode.NOT_FOUND,
            f"Google has no such item: {message}",
            recoverable=True,
            suggestion="Check the id: list or search first to find the right one.",
        )
    if status == 409:
        return error_envelope(ErrorCode.CONFLICT, f"Google reports a conflict: {message}", recoverable=False)
    return error_envelope(
        ErrorCode.INVALID_ARGS,
        f"Google rejected the request ({status}): {message}",
        recoverable=True,
        suggestion="Fix the arguments Google names and call again.",
    )


def from_http_error(error: Any, scopes: Iterable[str]) -> ErrorEnvelope:
    """The envelope for a `googleapiclient.errors.HttpError`."""
    status = int(error.resp.status)
    retry_after = cast("str | None", error.resp.get("retry-after"))
    return envelope_for_status(status, _reason(error.content), str(error.reason or ""), retry_after, scopes)


def translating(scopes: Iterable[str]) -> Callable[[Callable[P, R]], Callable[P, R | ErrorEnvelope]]:
    """Wrap a tool's function so Google's errors (and `GoogleFailure`) become its envelope result."""
    try:  # the google extra, imported when the pack is built
        from google.auth.exceptions import RefreshError, TransportError
        from googleapiclient.errors import HttpError
        from httplib2 import HttpLib2Error
    except ImportError as error:
        raise missing_extra(error) from None

    needed = tuple(scopes)

    def wrap(function: Callable[P, R]) -> Callable[P, R | ErrorEnvelope]:
        @functools.wraps(function)
        def run(*args: P.args, **kwargs: P.kwargs) -> R | ErrorEnvelope:
            try:
                return function(*args, **kwargs)
            except GoogleFailure as failure:
                return failure.envelope
            except HttpError as error:
                return from_http_error(error, needed)
            except RefreshError as error:  # the saved sign-in was revoked or expired for good mid-call
                return reauth_envelope(f"Google refused to renew the sign-in: {error}", needed)
            except (TransportError, HttpLib2Error, OSError) as error:
                return unreachable(error)

        return run

    return wrap


def unreachable(error: BaseException) -> ErrorEnvelope:
    return error_envelope(
        ErrorCode.CONNECTION_INACTIVE,
        f"Google could not be reached: {type(error).__name__}: {error}",
        recoverable=True,
        suggestion="Try again in a moment; if it keeps failing, tell the user Google is unreachable.",
    )


def _reason(content: bytes) -> str:
    try:
        data: Any = json.loads(content)
        first: Any = data["error"]["errors"][0]["reason"]
        return str(first)
    except (ValueError, KeyError, IndexError, TypeError):
        pass
    try:
        details: Any = json.loads(content)["error"]["details"]
        return str(next(d["reason"] for d in details if "reason" in d))
    except (ValueError, KeyError, TypeError, StopIteration):
        return ""


def _seconds(retry_after: str | None) -> float:
    """`Retry-After` in seconds: a number, or an HTTP date (then the wait until it)."""
    if not retry_after:
        return _DEFAULT_RETRY_AFTER_S
    try:
        return max(0.0, float(retry_after))
    except ValueError:
        pass
    from datetime import UTC, datetime
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(retry_after)
    except (TypeError, ValueError):
        return _DEFAULT_RETRY_AFTER_S
    return max(0.0, round((when - datetime.now(UTC)).total_seconds(), 1))
