"""Tools from every source, one ToolSpec each, validated the same way whichever source defined them.

Sources: `@tool` on Python functions, MOOLLM YAML (seed 001), TypeScript-like signatures (seed 003),
OpenAI / Anthropic / Gemini / MCP tool JSON and BFCL function docs. Exports back to each provider's JSON.
"""

from tether.tools._combined import CombinedToolset as CombinedToolset
from tether.tools._filtered import FilteredToolset as FilteredToolset
from tether.tools._function import tool as tool
from tether.tools._loader import ToolsLike as ToolsLike
from tether.tools._loader import as_toolset as as_toolset
from tether.tools._loader import load_tools as load_tools
from tether.tools._prefixed import PrefixedToolset as PrefixedToolset
from tether.tools._providers import ExportFormat as ExportFormat
from tether.tools._providers import export_tools as export_tools
from tether.tools._providers import from_anthropic as from_anthropic
from tether.tools._providers import from_bfcl as from_bfcl
from tether.tools._providers import from_gemini as from_gemini
from tether.tools._providers import from_mcp as from_mcp
from tether.tools._providers import from_openai as from_openai
from tether.tools._providers import spec_from_dict as spec_from_dict
from tether.tools._providers import specs_from_json as specs_from_json
from tether.tools._providers import to_anthropic as to_anthropic
from tether.tools._providers import to_gemini as to_gemini
from tether.tools._providers import to_openai as to_openai
from tether.tools._redact import REDACTED as REDACTED
from tether.tools._redact import SecretText as SecretText
from tether.tools._redact import redact as redact
from tether.tools._schema import model_schema as model_schema
from tether.tools._tool import ContextSource as ContextSource
from tether.tools._tool import Tool as Tool
from tether.tools._tool import ToolContext as ToolContext
from tether.tools._tool import ValidatedCall as ValidatedCall
from tether.tools._toolset import AbstractToolset as AbstractToolset
from tether.tools._toolset import Toolset as Toolset
from tether.tools._typescript import specs_from_typescript as specs_from_typescript
from tether.tools._validation import ArgumentValidator as ArgumentValidator
from tether.tools._validation import Problem as Problem
from tether.tools._validation import describe_problems as describe_problems
from tether.tools._yaml import dump_yaml as dump_yaml
from tether.tools._yaml import specs_from_yaml as specs_from_yaml

__all__ = [
    "REDACTED",
    "AbstractToolset",
    "ArgumentValidator",
    "CombinedToolset",
    "ContextSource",
    "ExportFormat",
    "FilteredToolset",
    "PrefixedToolset",
    "Problem",
    "SecretText",
    "Tool",
    "ToolContext",
    "ToolsLike",
    "Toolset",
    "ValidatedCall",
    "as_toolset",
    "describe_problems",
    "dump_yaml",
    "export_tools",
    "from_anthropic",
    "from_bfcl",
    "from_gemini",
    "from_mcp",
    "from_openai",
    "load_tools",
    "model_schema",
    "redact",
    "spec_from_dict",
    "specs_from_json",
    "specs_from_typescript",
    "specs_from_yaml",
    "to_anthropic",
    "to_gemini",
    "to_openai",
    "tool",
]
