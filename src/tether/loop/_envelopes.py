"""The envelopes the loop itself builds, all here: one place to switch to tether's single envelope builder.

The loop answers a call itself only when a limit stops it before it finished (`TIMEOUT`); every other
envelope comes from the executor.
"""

from __future__ import annotations

from typing import Any

from tether.execution import stopped_suggestion
from tether.tools import Tool
from tether.types import ErrorCode, ErrorEnvelope, ErrorInfo, NeedsEnvelope, OkEnvelope, ToolCall

__all__ = ["AnyEnvelope", "stopped"]

AnyEnvelope = OkEnvelope | NeedsEnvelope | ErrorEnvelope
"""An envelope of any kind, as the executor returns them."""


def stopped(call: ToolCall, tool: Tool[..., Any] | None, why: str) -> ErrorEnvelope:
    """`TIMEOUT` for a call the run's limit stopped before it finished; what to do next depends on whether
    the tool may have partly taken effect."""
    suggestion = stopped_suggestion(tool.spec.side_effects if tool is not None else None)
    message = f"{call.name} was stopped before it finished: {why}."
    info = ErrorInfo(code=ErrorCode.TIMEOUT, message=message, recoverable=True, suggestion=suggestion)
    return ErrorEnvelope(error=info)
