"""Dialects: tool-call formats, read from text or native deltas (complete or streaming), taught, fed back.

from tether.dialects import parse, stream_parser
result = parse(text, dialect="hermes", tools=None)
p = stream_parser("hermes"); events = p.feed(delta); events += p.close(); p.result
get_dialect("hermes").render_calls(calls)  # the calls as the model writes them

A text dialect is data: `Dialect.openers`, its regions' markers, each call region with its body format
(`Opener("<tool_call>", ends=("</tool_call>",), body=JsonCalls())`). Body formats the families share are
`JsonCalls`, `XmlFunctions`, `ArgPairs`, `XmlInvoke` and `PythonCalls`; an odd one implements `Body` (and
`BodyStream` to read calls while they stream), writing what it reads through an `Emitter`. A format regions
cannot say declares a `parser` instead: a `RegionParser` subclass with hooks, or a `NativeParser` for a
provider's structured output. Packages register dialects with `register_dialect` or an entry point in the
`tether.dialects` group.
"""

from tether.dialects import (
    _builtin,  # noqa: F401  # pyright: ignore[reportUnusedImport] - registers built-ins
)
from tether.dialects._api import parse as parse
from tether.dialects._api import render_results as render_results
from tether.dialects._api import render_tools as render_tools
from tether.dialects._api import stream_parser as stream_parser
from tether.dialects._bodies import ArgPairs as ArgPairs
from tether.dialects._bodies import Body as Body
from tether.dialects._bodies import BodyStream as BodyStream
from tether.dialects._bodies import JsonCalls as JsonCalls
from tether.dialects._bodies import PythonCalls as PythonCalls
from tether.dialects._bodies import XmlFunctions as XmlFunctions
from tether.dialects._bodies import XmlInvoke as XmlInvoke
from tether.dialects._dialect import Dialect as Dialect
from tether.dialects._emitter import Emitter as Emitter
from tether.dialects._events import CallCompleted as CallCompleted
from tether.dialects._events import CallDelta as CallDelta
from tether.dialects._events import CallFailed as CallFailed
from tether.dialects._events import CallStarted as CallStarted
from tether.dialects._events import ParseError as ParseError
from tether.dialects._events import ParseEvent as ParseEvent
from tether.dialects._events import ParseResult as ParseResult
from tether.dialects._events import PartialCall as PartialCall
from tether.dialects._events import ReasoningDelta as ReasoningDelta
from tether.dialects._events import TextDelta as TextDelta
from tether.dialects._native import NativeParser as NativeParser
from tether.dialects._parser import StreamParser as StreamParser
from tether.dialects._regions import Opener as Opener
from tether.dialects._regions import RegionParser as RegionParser
from tether.dialects._registry import dialect_names as dialect_names
from tether.dialects._registry import get_dialect as get_dialect
from tether.dialects._registry import register_dialect as register_dialect
from tether.dialects._results import result_text as result_text
from tether.dialects._results import result_value as result_value
from tether.dialects._tools import ToolIndex as ToolIndex

__all__ = [
    "ArgPairs",
    "Body",
    "BodyStream",
    "CallCompleted",
    "CallDelta",
    "CallFailed",
    "CallStarted",
    "Dialect",
    "Emitter",
    "JsonCalls",
    "NativeParser",
    "Opener",
    "ParseError",
    "ParseEvent",
    "ParseResult",
    "PartialCall",
    "PythonCalls",
    "ReasoningDelta",
    "RegionParser",
    "StreamParser",
    "TextDelta",
    "ToolIndex",
    "XmlFunctions",
    "XmlInvoke",
    "dialect_names",
    "get_dialect",
    "parse",
    "register_dialect",
    "render_results",
    "render_tools",
    "result_text",
    "result_value",
    "stream_parser",
]
