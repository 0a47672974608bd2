"""The embedded default agent's model: offline, no key, yet it drives the real loop, dialect and tools.

It answers a question by listing the folder it may read (a real `fs.ls` call, written in the hermes
dialect and parsed like any model's output), then says what it found and how to plug in a real model.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator

from tether.models import Model, ModelChunk, ModelRequest
from tether.types import UserMessage

__all__ = ["DEMO_MODEL", "DemoModel"]

DEMO_MODEL = "tether:demo"
"""The model name that selects this model in a config file."""

_NAME = re.compile(r'"name":\s*"([^"]+)"')
_RESULTS = "<tool_response>"


class DemoModel(Model):
    """A rule-following stand-in for a model, streamed word by word."""

    name = DEMO_MODEL
    native_dialect = None

    def __init__(self, delay_s: float = 0.02):
        self.delay_s = delay_s

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        for piece in re.findall(r"\S+\s*|\s+", _reply(request)):
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            yield piece


def _reply(request: ModelRequest) -> str:
    last = request.messages[-1] if request.messages else None
    text = last.content if isinstance(last, UserMessage) else ""
    if _RESULTS in text:
        names = _NAME.findall(text)
        found = ", ".join(names[:12]) + (" ..." if len(names) > 12 else "") if names else "nothing"
        return (
            f"The folder holds {len(names)} entries: {found}.\n\n"
            "I am tether's offline demo agent: give `tether serve` a config file naming a real model "
            "(see docs/serve.md) for real answers."
        )
    call = {
        "name": "fs.ls",
        "arguments": {"path": ".", "why": "See which files there are, to answer the user."},
    }
    return f"Let me look at the files I can read.\n<tool_call>{json.dumps(call)}</tool_call>"
