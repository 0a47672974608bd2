"""What a model can do about each error code, for tools that raise `ToolError` without a suggestion."""

from __future__ import annotations

from tether.types import ErrorCode

__all__ = ["DEFAULT_SUGGESTIONS", "stopped_suggestion"]

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


def stopped_suggestion(side_effects: str | None) -> str:
    """What to do about a call stopped before it finished (its own timeout, or the run's time limit)."""
    if side_effects == "mutating":
        return "It may have partly taken effect: check before trying again, and tell the user if you cannot."
    return "Try a smaller or simpler request (narrower scope, less input), or tell the user it is slow."
