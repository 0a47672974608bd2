"""Guard 4: the principal may call the tool (`UNAUTHORIZED`, `SCOPES_MISSING`; seed 002)."""

from __future__ import annotations

from typing import Any

from tether.execution._decisions import Allow, Decision, refusal
from tether.execution._guards._base import Attempt
from tether.execution._policy import Policy
from tether.tools import Tool
from tether.types import ErrorCode

__all__ = ["PrincipalGuard"]


class PrincipalGuard:
    """Refuses anonymous calls to tools with scopes (or to any tool, if the policy requires a principal),
    and calls whose principal lacks one of the tool's scopes."""

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        return tool is not None and (bool(tool.spec.scopes) or policy.require_principal)

    async def check(self, attempt: Attempt) -> Decision:
        tool = attempt.tool
        assert tool is not None, "the unknown-tool guard runs first"
        principal = attempt.run.principal
        needed = tool.spec.scopes
        if principal.anonymous and (needed or attempt.policy.require_principal):
            return refusal(
                ErrorCode.UNAUTHORIZED,
                f"{tool.name} can only be called on behalf of a signed-in user.",
                recoverable=False,
                suggestion="Tell the user they need to sign in (or connect their account) to do this.",
            )
        missing = [s for s in needed if s not in principal.scopes]
        if not missing:
            return Allow()
        return refusal(
            ErrorCode.SCOPES_MISSING,
            f"{tool.name} needs permission the user has not granted: {', '.join(missing)}.",
            recoverable=False,
            suggestion=(
                "Do not retry. Tell the user which permission is missing and ask them to grant it, "
                "or do what they asked with another tool."
            ),
            details={"missing_scopes": missing},
        )
