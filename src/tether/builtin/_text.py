"""Text a tool is given must be text a file, a program or a regex engine can take.

JSON's `\\ud800` escapes let a model send a lone surrogate: a Python string holds it, but it has no UTF-8
form, so writing it, passing it to a program or naming a file with it raises `UnicodeEncodeError` deep
inside a tool. Tools check their text arguments here first and refuse with INVALID_ARGS and where it is.
"""

from __future__ import annotations

from tether.exceptions import ToolError
from tether.types import ErrorCode

__all__ = ["SURROGATE_HINT", "check_text", "surrogate_problem"]

SURROGATE_HINT = "Send text only; write a surrogate pair as the one character it encodes."


def surrogate_problem(text: str) -> str | None:
    """Why `text` has no UTF-8 form (its first lone surrogate and where), or None when it has one."""
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        return f"is not Unicode text (a lone surrogate, {text[exc.start]!a}, at character {exc.start})"
    return None


def check_text(text: str, what: str) -> None:
    """Refuse `text` that cannot be encoded as UTF-8.

    Raises:
        ToolError: INVALID_ARGS naming `what` and the first lone surrogate.
    """
    if (problem := surrogate_problem(text)) is not None:
        raise ToolError(ErrorCode.INVALID_ARGS, f"{what} {problem}", suggestion=SURROGATE_HINT)
