"""Guard 6: calls tether had to repair do not run where that is unsafe (by default, mutating tools)."""

from __future__ import annotations

from typing import Any

from tether.execution._decisions import Allow, Decision, refusal
from tether.execution._guards._base import Attempt
from tether.execution._policy import Policy
from tether.tools import Tool
from tether.types import ErrorCode

__all__ = ["RepairedCallGuard"]

_ALLOW = Allow()


class RepairedCallGuard:
    """Refuses repaired calls according to `Policy.repaired_calls`, ignoring `Policy.tolerated_repairs`."""

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        if tool is None or policy.repaired_calls == "allow":
            return False
        return policy.repaired_calls == "refuse_all" or tool.spec.side_effects == "mutating"

    async def check(self, attempt: Attempt) -> Decision:
        return self.check_now(attempt)

    def check_now(self, attempt: Attempt) -> Decision:
        """The decision, without waiting (the executor calls this, not `check`)."""
        tool = attempt.tool
        assert tool is not None, "the unknown-tool guard runs first"
        provenance = attempt.call.provenance  # `call.repairs`, without the property's call
        if provenance is None or not provenance.repairs:  # the usual call, as the model wrote it
            return _ALLOW
        given = provenance.repairs
        policy = attempt.policy
        if policy.repaired_calls == "allow":
            return _ALLOW
        if policy.repaired_calls == "refuse_mutating" and tool.spec.side_effects != "mutating":
            return _ALLOW
        repairs = [r for r in given if r.kind not in policy.tolerated_repairs]
        if not repairs:
            return _ALLOW
        listed = "; ".join(f"{r.path}: {r.message}" if r.path else r.message for r in repairs)
        return refusal(
            ErrorCode.INVALID_ARGS,
            f"The call to {tool.name} was malformed and had to be repaired ({listed}); "
            "a repaired call is not run because this tool changes things.",
            recoverable=True,
            suggestion="Send the call again, exactly well-formed, with the arguments you intend.",
            details={"repairs": [r.model_dump(mode="json") for r in repairs]},
        )
