"""Real model outputs through the whole loop: whatever a model writes, every call it made is answered exactly
once, in call order, and every tool start has its end.

Each case of the corpora (up to 25 per format) is the model's first turn, cut into pieces of random sizes;
its second turn is plain text. The calls name whatever tools the output names, so the toolset declares those
names with an open schema; a name that is not a valid tool name is refused as an unknown tool, which is
just as much an answer.
"""

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tether.dialects import dialect_names, parse
from tether.exceptions import UserError
from tether.loop import Agent
from tether.models import FunctionModel, ModelRequest
from tether.tools import Tool, Toolset
from tether.types import (
    AssistantMessage,
    ChainEndEvent,
    ChainStartEvent,
    SideEffects,
    ToolEndEvent,
    ToolResultMessage,
    ToolSpec,
    ToolStartEvent,
)

pytestmark = pytest.mark.anyio

PER_FORMAT = 25


def cases(corpora: Path) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    known = set(dialect_names())
    for path in sorted(corpora.glob("*.jsonl")):
        if path.stem not in known:  # files of other libraries' semantics (json_repair, ...) have no dialect
            continue
        with path.open(encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        out += [(path.stem, row["text"]) for row in rows[:PER_FORMAT] if isinstance(row.get("text"), str)]
    return out


def toolset_for(text: str, dialect: str, side_effects: SideEffects) -> Toolset:
    """Every name the output calls, declared with an open schema and a function that echoes its arguments."""

    async def echo(**arguments: Any) -> dict[str, Any]:
        return arguments

    tools: list[Tool[..., Any]] = []
    for name in dict.fromkeys(c.name for c in parse(text, dialect).calls):
        try:
            spec = ToolSpec(
                name=name, description="Echo.", input_schema={"type": "object"}, side_effects=side_effects
            )
        except (ValueError, UserError):
            continue  # not a valid tool name: the call is refused as an unknown tool
        tools.append(Tool(spec, echo))
    return Toolset(*tools)


def chunks(text: str, rng: random.Random) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(text):
        size = rng.randint(1, 12)
        out.append(text[i : i + size])
        i += size
    return out


@pytest.mark.parametrize("side_effects", ["none", "mutating"])  # started while streaming, or after the turn
async def test_every_call_in_real_model_output_is_answered_once_in_order(
    corpora_dir: Path, side_effects: SideEffects
) -> None:
    rng = random.Random(7)
    checked = 0
    for dialect, text in cases(corpora_dir):
        pieces = chunks(text, rng)

        def reply(request: ModelRequest, pieces: list[str] = pieces) -> list[str]:
            answered = any(isinstance(m, AssistantMessage) for m in request.messages)
            return ["Done."] if answered else pieces

        agent = Agent(FunctionModel(reply), toolset_for(text, dialect, side_effects), dialect=dialect)
        result = await agent.run("go")
        where = f"{dialect}: {text[:120]!r}"
        assert result.reason == "no_calls", where
        assert isinstance(result.events[0], ChainStartEvent), where
        assert isinstance(result.events[-1], ChainEndEvent), where
        first = next(m for m in result.messages if isinstance(m, AssistantMessage))
        results = [m for m in result.messages if isinstance(m, ToolResultMessage)]
        assert [r.call_id for r in results] == [c.id for c in first.tool_calls], where
        assert len({c.id for c in first.tool_calls}) == len(first.tool_calls), where
        starts = [e.call.id for e in result.events if isinstance(e, ToolStartEvent)]
        ends = [e.call_id for e in result.events if isinstance(e, ToolEndEvent)]
        assert sorted(starts) == sorted(ends) == sorted(c.id for c in first.tool_calls), where
        checked += 1
    assert checked > 500  # the corpora are there and were read
