"""Guard 3: a tool that requires `why` gets a real one (`MISSING_WHY`; seed 001 §4).

Missing, empty and content-free intents are refused. Content-free means that, once stop words, filler
("because I need it") and the words of the tool's own name are set aside, nothing is left: "read the file"
for `fs.read` says what the call does, not what it is for.
"""

from __future__ import annotations

import re
from typing import Any

from tether.execution._decisions import Allow, Decision, refusal
from tether.execution._guards._base import Attempt
from tether.execution._policy import Policy
from tether.tools import Tool
from tether.types import ErrorCode, ToolCall

__all__ = ["WhyGuard", "is_content_free", "why_of"]

_WORD = re.compile(r"[a-z0-9]+")
_FILLER_WORDS = """
a an the this that these those it its i me my we our you your to of for in on at by with from into and or
but so as is are be am was were do does did done doing need needs needed want wants wanted have has had
because just
please now then again some any thing things stuff file files tool tools call calling run running use using get
getting make im why reason no none na n todo tbd test testing ok okay yes x xx xxx foo bar baz
"""
_FILLER = frozenset(_FILLER_WORDS.split())
_SUGGESTION = (
    "Add `why`: one sentence saying what you are trying to accomplish with this call, "
    'e.g. "Find where the parser handles nested expressions to fix the reported bug".'
)


def why_of(call: ToolCall) -> object:
    """The call's stated intent, wherever the model put it (the `why` field or a `why` argument)."""
    return call.why if call.why is not None else call.arguments.get("why")


def is_content_free(why: str, tool_name: str) -> bool:
    """Whether `why` says nothing beyond filler and the tool's own name."""
    own = set(_WORD.findall(tool_name.lower().replace("_", " ")))
    words = _WORD.findall(why.lower())
    return not any(w not in _FILLER and w not in own and not w.isdigit() for w in words)


class WhyGuard:
    """Refuses calls to `requires_why` tools whose `why` is missing, empty or content-free."""

    def applies(self, tool: Tool[..., Any] | None, policy: Policy) -> bool:
        return tool is not None and tool.spec.requires_why

    async def check(self, attempt: Attempt) -> Decision:
        tool = attempt.tool
        assert tool is not None, "the unknown-tool guard runs first"
        if not tool.spec.requires_why:
            return Allow()
        why = why_of(attempt.call)
        if not isinstance(why, str) or not why.strip():
            problem = "has no `why`" if why is None else "has an empty `why`"
        elif attempt.policy.reject_content_free_why and is_content_free(why, tool.name):
            problem = f"has a `why` that states no intent ({why.strip()!r})"
        else:
            return Allow()
        return refusal(
            ErrorCode.MISSING_WHY,
            f"The call to {tool.name} {problem}; this tool requires one.",
            recoverable=True,
            suggestion=_SUGGESTION,
        )
