"""`Policy`: every limit the executor enforces, each a typed field with a safe default."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Policy", "RepairedCallPolicy"]

RepairedCallPolicy = Literal["refuse_mutating", "refuse_all", "allow"]
"""What to do with a call tether had to repair: refuse it for mutating tools, for all tools, or never."""


class Policy(BaseModel):
    """The executor's limits. The defaults are safe for an agent talking to untrusted model output."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_concurrency: int = Field(default=64, gt=0)
    """How many independent calls of one batch may run at the same time. The default lets a model's usual
    fan-out (tens of calls in a turn) overlap fully: what makes concurrency safe is bounded elsewhere, per
    call and per run (rate limits, quotas, `Limits.max_tool_calls`, sync tools' worker threads); lower it for
    tools that share a scarce resource, e.g. `isolation="process"` tools on a small machine."""
    default_timeout_s: float | None = Field(default=60.0, gt=0)
    """Timeout for tools whose sandbox policy sets none; `None` lets them run for ever."""
    require_principal: bool = False
    """Refuse every call without a principal (`UNAUTHORIZED`), not only calls to tools that need scopes."""
    reject_content_free_why: bool = True
    """Refuse a `why` that says nothing beyond the tool's name ("read the file", "because I need it")."""
    max_calls_per_run: int | None = Field(default=None, gt=0)
    """Calls one run may make; `None` for no limit."""
    max_output_bytes_per_run: int | None = Field(default=None, gt=0)
    """Bytes of tool output (as JSON) one run may receive; `None` for no limit."""
    max_wall_time_s_per_run: float | None = Field(default=None, gt=0)
    """Seconds from a run's first call after which it may start no more calls; `None` for no limit."""
    repaired_calls: RepairedCallPolicy = "refuse_mutating"
    """Which calls whose payload tether had to repair are refused rather than run."""
    tolerated_repairs: frozenset[str] = frozenset({"coerced"})
    """Repair kinds that do not count as repairs for `repaired_calls`. By default `coerced`: a value the
    schema reads unambiguously (`"5"` for an integer, every number in an XML-style format) is not a guess
    about what the model meant, as a mended bracket or quote is. Set `frozenset()` to refuse those too."""
    idempotency: bool = True
    """Answer a repeated call from the journal instead of running it again."""
    closest_tools: int = Field(default=3, ge=0)
    """How many similar tool names an `UNKNOWN_TOOL` suggestion offers."""
