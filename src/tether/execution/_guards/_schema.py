"""Guard 2: the arguments must match the tool's input schema (`INVALID_ARGS`, listing every problem)."""

from __future__ import annotations

from typing import Any

from tether.execution._decisions import Decision, allowed, refusal
from tether.execution._guards._base import Attempt
from tether.execution._policy import Policy
from tether.tools import Problem, Tool, describe_problems
from tether.types import ErrorCode

__all__ = ["SchemaGuard"]


def _missing_why(problem: Problem) -> bool:
    return problem.kind == "required" and problem.path == "$.why"


class SchemaGuard:
    """Validates (and safely coerces) the arguments; a missing `why` is left to the `why` guard."""

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        return tool is not None

    async def check(self, attempt: Attempt) -> Decision:
        return self.check_now(attempt)

    def check_now(self, attempt: Attempt) -> Decision:
        """The decision, without waiting (the executor calls this, not `check`)."""
        tool = attempt.tool
        assert tool is not None, "the unknown-tool guard runs first"
        call = attempt.call
        why = call.why
        if (
            why is not None
            and "why" in tool.spec.input_schema.get("properties", {})
            and "why" not in call.arguments
        ):
            call = call.model_copy(update={"arguments": {**call.arguments, "why": why}})
        validated = tool.validate_call(call)
        problems = validated.problems
        if not problems:  # the usual call: nothing to filter
            return allowed(validated)
        if tool.spec.requires_why:
            problems = [p for p in problems if not _missing_why(p)]
        if not problems:
            return allowed(validated)
        return refusal(
            ErrorCode.INVALID_ARGS,
            describe_problems(tool.name, problems),
            recoverable=True,
            suggestion="Fix every listed argument and call the tool again.",
            details={"problems": [{"path": p.path, "message": p.message} for p in problems]},
        )
