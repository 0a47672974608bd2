"""tether: let any LLM use tools safely and fast, in any tool-call format.

The public API is re-exported here and loaded on first use (PEP 562), so `import tether` costs a few
milliseconds and a program pays only for the parts it touches.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.dialects import ParseResult as ParseResult
    from tether.dialects import parse as parse
    from tether.dialects import stream_parser as stream_parser
    from tether.exceptions import ModelError as ModelError
    from tether.exceptions import NeedsInput as NeedsInput
    from tether.exceptions import SandboxUnavailable as SandboxUnavailable
    from tether.exceptions import TetherError as TetherError
    from tether.exceptions import TetherRuntimeError as TetherRuntimeError
    from tether.exceptions import ToolCrashed as ToolCrashed
    from tether.exceptions import ToolError as ToolError
    from tether.exceptions import ToolSignal as ToolSignal
    from tether.exceptions import UserError as UserError
    from tether.execution import Executor as Executor
    from tether.execution import Policy as Policy
    from tether.execution import Principal as Principal
    from tether.loop import Agent as Agent
    from tether.loop import EndTurn as EndTurn
    from tether.loop import FinalResponse as FinalResponse
    from tether.loop import Limits as Limits
    from tether.loop import NoCalls as NoCalls
    from tether.loop import RunResult as RunResult
    from tether.loop import Session as Session
    from tether.models import AnthropicModel as AnthropicModel
    from tether.models import FunctionModel as FunctionModel
    from tether.models import Model as Model
    from tether.models import OpenAIModel as OpenAIModel
    from tether.models import ScriptedModel as ScriptedModel
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
    "Agent": "tether.loop",
    "AnthropicModel": "tether.models",
    "EndTurn": "tether.loop",
    "Envelope": "tether.types",
    "ErrorCode": "tether.types",
    "ErrorEnvelope": "tether.types",
    "ErrorInfo": "tether.types",
    "Event": "tether.types",
    "Executor": "tether.execution",
    "FinalResponse": "tether.loop",
    "FunctionModel": "tether.models",
    "Limits": "tether.loop",
    "Message": "tether.types",
    "Model": "tether.models",
    "ModelError": "tether.exceptions",
    "NeedsEnvelope": "tether.types",
    "NeedsInput": "tether.exceptions",
    "NoCalls": "tether.loop",
    "OkEnvelope": "tether.types",
    "OpenAIModel": "tether.models",
    "ParseResult": "tether.dialects",
    "Policy": "tether.execution",
    "Principal": "tether.execution",
    "RunResult": "tether.loop",
    "SandboxUnavailable": "tether.exceptions",
    "ScriptedModel": "tether.models",
    "Session": "tether.loop",
    "TetherError": "tether.exceptions",
    "TetherRuntimeError": "tether.exceptions",
    "Tool": "tether.tools",
    "ToolCall": "tether.types",
    "ToolContext": "tether.tools",
    "ToolCrashed": "tether.exceptions",
    "ToolError": "tether.exceptions",
    "ToolSignal": "tether.exceptions",
    "ToolSpec": "tether.types",
    "Toolset": "tether.tools",
    "UserError": "tether.exceptions",
    "as_toolset": "tether.tools",
    "load_tools": "tether.tools",
    "parse": "tether.dialects",
    "stream_parser": "tether.dialects",
    "tool": "tether.tools",
}

__all__ = [
    "AbstractToolset",
    "Agent",
    "AnthropicModel",
    "EndTurn",
    "Envelope",
    "ErrorCode",
    "ErrorEnvelope",
    "ErrorInfo",
    "Event",
    "Executor",
    "FinalResponse",
    "FunctionModel",
    "Limits",
    "Message",
    "Model",
    "ModelError",
    "NeedsEnvelope",
    "NeedsInput",
    "NoCalls",
    "OkEnvelope",
    "OpenAIModel",
    "ParseResult",
    "Policy",
    "Principal",
    "RunResult",
    "SandboxUnavailable",
    "ScriptedModel",
    "Session",
    "TetherError",
    "TetherRuntimeError",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolCrashed",
    "ToolError",
    "ToolSignal",
    "ToolSpec",
    "Toolset",
    "UserError",
    "__version__",
    "as_toolset",
    "load_tools",
    "parse",
    "stream_parser",
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
