"""Tools from every source, one ToolSpec each, validated the same way whichever source defined them.

Sources: `@tool` on Python functions, MOOLLM YAML (seed 001), TypeScript-like signatures (seed 003),
OpenAI / Anthropic / Gemini / MCP tool JSON and BFCL function docs. Exports back to each provider's JSON.
"""

from tether.tools._combined import CombinedToolset as CombinedToolset
from tether.tools._filtered import FilteredToolset as FilteredToolset
from tether.tools._function import tool as tool
from tether.tools._prefixed import PrefixedToolset as PrefixedToolset
from tether.tools._tool import Tool as Tool
from tether.tools._tool import ToolContext as ToolContext
from tether.tools._tool import ValidatedCall as ValidatedCall
from tether.tools._toolset import AbstractToolset as AbstractToolset
from tether.tools._toolset import Toolset as Toolset
from tether.tools._toolset import provider_alias as provider_alias
from tether.tools._validation import Problem as Problem
from tether.tools._validation import describe_problems as describe_problems

__all__ = [
    "AbstractToolset",
    "CombinedToolset",
    "FilteredToolset",
    "PrefixedToolset",
    "Problem",
    "Tool",
    "ToolContext",
    "Toolset",
    "ValidatedCall",
    "describe_problems",
    "provider_alias",
    "tool",
]
