"""tether: let any LLM use tools safely and fast, in any tool-call format.

The public API is re-exported here and loaded on first use (PEP 562), so `import tether` costs a few
milliseconds and a program pays only for the parts it touches.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.exceptions import NeedsInput as NeedsInput
    from tether.exceptions import TetherError as TetherError
    from tether.exceptions import TetherRuntimeError as TetherRuntimeError
    from tether.exceptions import ToolError as ToolError
    from tether.exceptions import ToolSignal as ToolSignal
    from tether.exceptions import UserError as UserError
    from tether.tools import AbstractToolset as AbstractToolset
    from tether.tools import Tool as Tool
    from tether.tools import ToolContext as ToolContext
    from tether.tools import Toolset as Toolset
    from tether.tools import as_toolset as as_toolset
    from tether.tools import load_tools as load_tools
    from tether.tools import tool as tool
    from tether.types import Envelope as Envelope
    from tether.types import ErrorCode as ErrorCode
    from tether.types import ErrorEnvelope as ErrorEnvelope
    from tether.types import ErrorInfo as ErrorInfo
    from tether.types import Event as Event
    from tether.types import Message as Message
    from tether.types import NeedsEnvelope as NeedsEnvelope
    from tether.types import OkEnvelope as OkEnvelope
    from tether.types import ToolCall as ToolCall
    from tether.types import ToolSpec as ToolSpec

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AbstractToolset": "tether.tools",
    "Envelope": "tether.types",
    "ErrorCode": "tether.types",
    "ErrorEnvelope": "tether.types",
    "ErrorInfo": "tether.types",
    "Event": "tether.types",
    "Message": "tether.types",
    "NeedsEnvelope": "tether.types",
    "NeedsInput": "tether.exceptions",
    "OkEnvelope": "tether.types",
    "TetherError": "tether.exceptions",
    "TetherRuntimeError": "tether.exceptions",
    "Tool": "tether.tools",
    "ToolCall": "tether.types",
    "ToolContext": "tether.tools",
    "ToolError": "tether.exceptions",
    "ToolSignal": "tether.exceptions",
    "ToolSpec": "tether.types",
    "Toolset": "tether.tools",
    "UserError": "tether.exceptions",
    "as_toolset": "tether.tools",
    "load_tools": "tether.tools",
    "tool": "tether.tools",
}

__all__ = [
    "AbstractToolset",
    "Envelope",
    "ErrorCode",
    "ErrorEnvelope",
    "ErrorInfo",
    "Event",
    "Message",
    "NeedsEnvelope",
    "NeedsInput",
    "OkEnvelope",
    "TetherError",
    "TetherRuntimeError",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolSignal",
    "ToolSpec",
    "Toolset",
    "UserError",
    "__version__",
    "as_toolset",
    "load_tools",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tether' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
