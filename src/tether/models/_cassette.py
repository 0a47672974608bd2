"""Record and replay: every model turn of a run saved as the exact events the model streamed.

A cassette is JSON lines: a header `{"cassette": 2, "prompt", "dialect", "termination", "tools", ...}`, then
one `{"turn": i, "chunks": [...]}` per model turn, where text is a string and any other event an object
naming it (`{"event": "ToolCallChunk", "index": 0, ...}`). Version 1 cassettes, recorded when models
streamed their provider's JSON, hold those objects instead: they replay through the dialect that reads them.
Replaying feeds the same events, split the same way, through the real parser, executor and tools: no key
and no network.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

from tether._model_events import (
    Finish,
    ModelChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    ToolCallDone,
    Usage,
)
from tether.exceptions import UserError
from tether.models._base import Model, ModelRequest
from tether.models._test import ScriptedModel

_EVENTS: dict[str, type[ModelChunk]] = {
    kind.__name__: kind for kind in (ReasoningChunk, ToolCallChunk, ToolCallDone, Usage, Finish)
}

__all__ = ["RecordingModel", "load_cassette"]


class RecordingModel(Model):
    """Wraps a model and appends each turn it streams to a cassette file."""

    def __init__(self, inner: Model, path: Path, header: dict[str, Any]):
        self.inner = inner
        self.name = inner.name
        self.native_dialect = inner.native_dialect
        self.path = path
        self.turns = 0
        path.write_text(json.dumps({"cassette": 2, "native_dialect": inner.native_dialect, **header}) + "\n")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        chunks: list[Any] = []
        try:
            async for chunk in self.inner.stream(request):
                chunks.append(_recorded(chunk))
                yield chunk
        finally:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"turn": self.turns, "chunks": chunks}, ensure_ascii=False) + "\n")
            self.turns += 1


_HEADER_TYPES: dict[str, type | tuple[type, ...]] = {
    "prompt": str,
    "native_dialect": (str, type(None)),
    "dialect": (str, type(None)),
    "termination": (str, type(None)),
    "system_prompt": str,
    "tools": list,
    "packs": list,
    "roots": list,
}


def load_cassette(path: Path) -> tuple[dict[str, Any], ScriptedModel]:
    """The cassette's header and a model that streams its turns again, chunk for chunk.

    Raises:
        UserError: the file cannot be read or is not a cassette; the message names the line at fault.
    """
    try:
        lines: list[Any] = [
            json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UserError(f"Cannot read cassette {path}: {e}") from e
    version = (
        cast("dict[str, Any]", lines[0]).get("cassette") if lines and isinstance(lines[0], dict) else None
    )
    if version not in (1, 2):
        raise UserError(
            f"{path} is not a tether cassette (its first line should be a header with cassette: 2, or 1)."
        )
    header = cast("dict[str, Any]", lines[0])
    for key, kind in _HEADER_TYPES.items():
        value = header.get(key)
        if key in header and not isinstance(value, kind):
            raise UserError(f"{path}: the header's {key!r} should be a {_named(kind)}, not {value!r}.")
        if isinstance(value, list) and not all(isinstance(v, str) for v in cast("list[Any]", value)):
            raise UserError(f"{path}: the header's {key!r} should be a list of strings, not {value!r}.")
    return header, ScriptedModel(
        [_chunks(path, n, turn, version) for n, turn in enumerate(lines[1:], 2)],
        native_dialect=header.get("native_dialect"),
        name="replay",
    )


def _named(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join("null" if k is type(None) else k.__name__ for k in kinds)


def _recorded(chunk: ModelChunk) -> Any:
    if type(chunk) is TextChunk:
        return chunk.text
    return {
        "event": type(chunk).__name__,
        **{f.name: getattr(chunk, f.name) for f in dataclasses.fields(chunk)},
    }


def _chunks(path: Path, line: int, turn: Any, version: int) -> list[Any]:
    """A turn's chunks as the scripted model takes them: text, typed events, or (version 1) provider JSON,
    which the scripted model reads through its native dialect."""
    chunks = cast("dict[str, Any]", turn).get("chunks") if isinstance(turn, dict) else None
    if not isinstance(chunks, list) or not all(isinstance(c, str | dict) for c in cast("list[Any]", chunks)):
        raise UserError(
            f"{path}:{line} is not a recorded model turn: a JSON object whose `chunks` is a list of text "
            "or recorded events."
        )
    if version == 1:
        return cast("list[Any]", chunks)
    return [
        c if isinstance(c, str) else _event(path, line, cast("dict[str, Any]", c))
        for c in cast("list[Any]", chunks)
    ]


def _event(path: Path, line: int, recorded: dict[str, Any]) -> ModelChunk:
    fields = dict(recorded)
    kind = _EVENTS.get(str(fields.pop("event", "")))
    try:
        if kind is None:
            raise TypeError(f"no event named {recorded.get('event')!r}")
        return kind(**fields)
    except TypeError as e:
        raise UserError(f"{path}:{line} holds an event that is not a model event ({e}): {recorded!r}") from e
