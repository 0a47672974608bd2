"""Guard 1: the call must name a tool the toolset has (`UNKNOWN_TOOL`, suggesting the closest names)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from tether.execution._decisions import Allow, Decision, refusal
from tether.execution._guards._base import Attempt
from tether.execution._policy import Policy
from tether.tools import Tool
from tether.types import ErrorCode

__all__ = ["ClosestNames", "UnknownToolGuard"]


class ClosestNames(Protocol):
    def closest(self, name: str, n: int = 3) -> Sequence[str]: ...


class UnknownToolGuard:
    """Refuses calls to tools the toolset does not have, naming the closest ones."""

    def __init__(self, toolset: ClosestNames):
        self._toolset = toolset

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        return tool is None

    async def check(self, attempt: Attempt) -> Decision:
        if attempt.tool is not None:
            return Allow()
        name = attempt.call.name
        close = (
            list(self._toolset.closest(name, attempt.policy.closest_tools))
            if attempt.policy.closest_tools
            else []
        )
        if close:
            names = ", ".join(f"`{n}`" for n in close)
            suggestion = f"Call one of the available tools instead; the closest names are {names}."
        else:
            suggestion = "Call one of the tools listed in your instructions."
        return refusal(
            ErrorCode.UNKNOWN_TOOL,
            f"There is no tool named {name!r}.",
            recoverable=True,
            suggestion=suggestion,
            details={"closest": close},
        )
