"""Record and replay: every model turn of a run saved as the exact chunks the model streamed.

A cassette is JSON lines: a header `{"cassette": 1, "prompt", "dialect", "termination", "tools", ...}`, then
one `{"turn": i, "chunks": [...]}` per model turn. Replaying feeds the same chunks, split the same way,
through the real parser, executor and tools: no key and no network.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tether.exceptions import UserError
from tether.models._base import Model, ModelChunk, ModelRequest
from tether.models._test import ScriptedModel

__all__ = ["RecordingModel", "load_cassette"]


class RecordingModel(Model):
    """Wraps a model and appends each turn it streams to a cassette file."""

    def __init__(self, inner: Model, path: Path, header: dict[str, Any]):
        self.inner = inner
        self.name = inner.name
        self.native_dialect = inner.native_dialect
        self.path = path
        self.turns = 0
        path.write_text(json.dumps({"cassette": 1, "native_dialect": inner.native_dialect, **header}) + "\n")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        chunks: list[ModelChunk] = []
        try:
            async for chunk in self.inner.stream(request):
                chunks.append(chunk)
                yield chunk
        finally:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"turn": self.turns, "chunks": chunks}, ensure_ascii=False) + "\n")
            self.turns += 1


def load_cassette(path: Path) -> tuple[dict[str, Any], ScriptedModel]:
    """The cassette's header and a model that streams its turns again, chunk for chunk."""
    try:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"Cannot read cassette {path}: {e}") from e
    if not lines or lines[0].get("cassette") != 1:
        raise UserError(
            f"{path} is not a tether cassette (its first line should be a header with cassette: 1)."
        )
    header, turns = lines[0], lines[1:]
    model = ScriptedModel(
        [t["chunks"] for t in turns], native_dialect=header.get("native_dialect"), name="replay"
    )
    return header, model
