"""Calls started while the model streams (`Calls.schedule`): one event-loop callback starts every call the
stream completed since the loop last ran, so these pin that a burst behaves as one callback a call did."""

import json
from collections.abc import AsyncIterator

import anyio
import pytest

from tether.loop import Agent, EndTurn
from tether.models import ModelChunk, ModelRequest, ScriptedModel, TextChunk
from tether.tools import tool
from tether.types import Event, OkEnvelope, ToolResultMessage, ToolStartEvent

pytestmark = pytest.mark.anyio

N = 12


def call(i: int) -> str:
    return json.dumps({"type": "probe", "id": f"c{i}", "operation": "probe", "parameters": {"n": i}})


def burst(first: int, last: int) -> str:
    return ", ".join(call(i) for i in range(first, last))


class Stream(ScriptedModel):
    """Writes the first turn's calls in chunks, waiting `pause` seconds after each (none: never waits)."""

    def __init__(self, chunks: list[str], pause: float | None, seen: list[list[int]], started: list[int]):
        super().__init__(
            [
                json.dumps(
                    {
                        "toolCalls": [
                            {"type": "end_turn", "id": "e", "operation": "end_turn", "parameters": {}}
                        ]
                    }
                )
            ]
        )
        self.chunks, self.pause, self.seen, self.started = chunks, pause, seen, started

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        if self.chunks:
            chunks, self.chunks = self.chunks, []
            for chunk in chunks:
                yield TextChunk(chunk)
                if self.pause is not None:
                    await anyio.sleep(self.pause)
                self.seen.append(list(self.started))  # what had started when the model went on
            return
        async for chunk in super().stream(request):
            yield chunk


async def run(
    chunks: list[str], pause: float | None
) -> tuple[list[int], list[list[int]], list[str], list[int]]:
    started: list[int] = []
    seen: list[list[int]] = []

    @tool(side_effects="none")
    async def probe(n: int) -> int:
        """Note the call's start, then wait."""
        started.append(n)
        await anyio.sleep(0.01)
        return n

    announced: list[str] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ToolStartEvent) and event.call.name == "probe":
            announced.append(event.call.id)

    model = Stream(chunks, pause, seen, started)
    agent = Agent(model, [probe], dialect="json_calls", termination=EndTurn())
    with anyio.fail_after(5):
        result = await agent.run("go", on_event=on_event)
    assert result.reason == "end_turn"
    answers = [m.envelope for m in result.messages if isinstance(m, ToolResultMessage) and m.name == "probe"]
    assert all(isinstance(e, OkEnvelope) for e in answers)
    return started, seen, announced, [e.data for e in answers if isinstance(e, OkEnvelope)]


async def test_a_burst_of_calls_starts_while_the_model_waits_each_once_in_the_order_written() -> None:
    chunks = ['{"toolCalls": [' + burst(0, N) + ",", burst(N, 2 * N) + "]}"]
    started, seen, announced, results = await run(chunks, pause=0.02)
    assert seen[0] == list(range(N)), "the first burst starts, whole and in order, while the model waits"
    assert started == list(range(2 * N))
    assert announced == [f"c{i}" for i in range(2 * N)]
    assert results == list(range(2 * N))


async def test_a_burst_the_stream_ends_before_waiting_runs_with_the_turn_each_once_in_order() -> None:
    chunks = ['{"toolCalls": [' + burst(0, N) + ",", burst(N, 2 * N) + "]}"]
    started, seen, announced, results = await run(chunks, pause=None)
    assert seen == [[], []], "a stream that never waits starts nothing while it streams"
    assert started == list(range(2 * N))
    assert announced == [f"c{i}" for i in range(2 * N)]
    assert results == list(range(2 * N))
