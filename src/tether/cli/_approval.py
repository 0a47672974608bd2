"""`--confirm`: a guard that asks the user before each call to a tool with side effects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

from tether.execution import Allow, Attempt, Decision, Policy, refusal
from tether.tools import Tool
from tether.types import ErrorCode, ToolCall

__all__ = ["Approval"]

Ask = Callable[[ToolCall], bool]
"""Shows the user a call and returns whether they approve it (blocking: it waits for their answer)."""


class Approval:
    """Asks `ask` before each call to a tool with side effects; without anyone to ask, refuses those calls.

    One question at a time: calls of one batch are asked about in turn.
    """

    def __init__(self, ask: Ask | None):
        self.ask = ask
        self._one_question = anyio.Lock()

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
        async with self._one_question:
            approved = await anyio.to_thread.run_sync(self.ask, attempt.call)
        if approved:
            return Allow()
        return refusal(
            ErrorCode.PERMISSION_DENIED,
            f"The user did not approve this call to {name}.",
            recoverable=False,
            suggestion="Do not repeat it. Ask the user what they would like instead.",
        )
