"""`--confirm`: a guard that asks the user before each call to a tool with side effects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.execution import Allow, Attempt, Decision, Policy, refusal
from tether.tools import Tool
from tether.types import ErrorCode, ToolCall

__all__ = ["Approval"]

Ask = Callable[[ToolCall], bool]
"""Shows the user a call and returns whether they approve it, waiting for their answer."""


class Approval:
    """Asks `ask` before each call to a tool with side effects; without anyone to ask, refuses those calls.

    The question blocks the run, on purpose: nothing else prints over it, calls of one batch are asked
    about in turn, and no reader is left waiting on the terminal if the run is cancelled meanwhile.
    """

    def __init__(self, ask: Ask | None):
        self.ask = ask

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        return tool is not None and tool.spec.side_effects != "none"

    async def check(self, attempt: Attempt) -> Decision:
        name = attempt.call.name
        if self.ask is None:
            return refusal(
                ErrorCode.PERMISSION_DENIED,
                f"{name} changes things, so it needs the user's approval, and no one is at a terminal to "
                "give it.",
                recoverable=False,
                suggestion="Do not retry. Tell the user what you would do with it: they can run it in a "
                "terminal to approve it, or without --confirm.",
            )
        if self.ask(attempt.call):
            return Allow()
        return refusal(
            ErrorCode.PERMISSION_DENIED,
            f"The user did not approve this call to {name}.",
            recoverable=False,
            suggestion="Do not repeat it. Ask the user what they would like instead.",
        )
