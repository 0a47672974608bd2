"""Dialects: tool-call formats, read from text or native deltas (complete or streaming), taught, fed back.

from tether.dialects import parse, stream_parser
result = parse(text, dialect="hermes", tools=None)
p = stream_parser("hermes"); events = p.feed(delta); events += p.close(); p.result
get_dialect("hermes").render_calls(calls)  # the calls as the model writes them

A dialect declares its parser class (`Dialect.parser`); a text format is usually a `RegionParser` with
`openers` (its markers, as data) and an `on_region` hook, writing what it reads through `self._emit` (an
`Emitter`, which the parser's callers never see). Packages register dialects with `register_dialect` or an
entry point in the `tether.dialects` group.
"""

from tether.dialects import (
    _builtin,  # noqa: F401  # pyright: ignore[reportUnusedImport] - registers built-ins
)
from tether.dialects._api import parse as parse
from tether.dialects._api import render_results as render_results
from tether.dialects._api import render_tools as render_tools
from tether.dialects._api import stream_parser as stream_parser
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
from tether.dialects._parser import StreamParser as StreamParser
from tether.dialects._regions import Opener as Opener
from tether.dialects._regions import RegionParser as RegionParser
from tether.dialects._registry import dialect_names as dialect_names
from tether.dialects._registry import get_dialect as get_dialect
from tether.dialects._registry import register_dialect as register_dialect
from tether.dialects._results import result_data as result_data
from tether.dialects._results import result_text as result_text
from tether.dialects._tools import ToolIndex as ToolIndex

__all__ = [
    "CallCompleted",
    "CallDelta",
    "CallFailed",
    "CallStarted",
    "Dialect",
    "Emitter",
    "Opener",
    "ParseError",
    "ParseEvent",
    "ParseResult",
    "PartialCall",
    "ReasoningDelta",
    "RegionParser",
    "StreamParser",
    "TextDelta",
    "ToolIndex",
    "dialect_names",
    "get_dialect",
    "parse",
    "register_dialect",
    "render_results",
    "render_tools",
    "result_data",
    "result_text",
    "stream_parser",
]
