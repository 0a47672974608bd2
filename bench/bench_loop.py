"""The agent loop: tether against pydantic-ai, openai-agents, langgraph and smolagents, each with a fake model.

Every system runs in its own process (this script re-run with `--child SYSTEM`), so imports and caches
never mix, `BENCH_ROUNDS` times (2; interleaved, each system keeping its quickest process), and each gets a fake model that answers from the conversation alone: a tool-call turn while
fewer than N tool turns have been taken, then a text turn. Measures:

1. one run = 2 model turns + 1 tool call (an async `add`): median µs over many runs after warm-up;
2. the marginal cost of a tool turn: runs with 1 and 5 tool turns, (t5 - t1) / 4;
3. 50 calls to an async tool that sleeps 10 ms, all in one model turn: median wall ms;
4. stream-to-start lag: the model streams a complete call, waits 20 ms, then ends its response; the lag
   is from the moment the fake model yields the call's last piece to the moment the tool's body starts.

The floor is a loop with nothing but the work itself: the same fake model, `json.loads` of the arguments,
pydantic validation and a direct `await` of the tool, results appended to a message list; it starts a
streamed call as a task as soon as its chunk arrives. The bound adds to the floor what the issue asks
every run to keep (events, typed messages, journal entries, a timeout, records), with tether's types but no
framework: what is left above it is the cost of the framework itself. `floor-sync` is the floor with the
tools as plain sync functions run through `loop.run_in_executor(None, ...)` (what pydantic-ai and
openai-agents do with sync tools): the thread hop's own cost, the floor `tether-sync` is judged over. `parts` calls tether's own parser,
executor, events and messages straight-line, with no loop around them: tether's row above it is the loop.
`pydantic-ai-sync`, `openai-agents-sync` and `langgraph-sync` are the peers with the same
plain sync tools, which each runs off its event loop in a thread (anyio's `to_thread.run_sync`,
`asyncio.to_thread`, `loop.run_in_executor`), as tether runs them: with smolagents (whose tools are sync and
called directly) they are the rows `tether-sync` is compared with.
The peers run in a bench-only environment (the `bench` dependency group), never as runtime dependencies;
they are imported dynamically, so this file type-checks with or without them installed.

`BENCH_ONLY=floor,bound,tether` runs only the systems named. `BENCH_BASELINE=<a checkout's src directory>`
(e.g. after `git worktree add /tmp/base main`: `/tmp/base/src`) runs every tether row a second time with
that tether imported instead, interleaved with this one in the same run, and adds an A/B table: a
before/after comparison on a busy machine where two separate runs would differ by more than the change.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from _timing import row

SYSTEMS = (
    "floor",
    "floor-sync",
    "bound",
    "parts",
    "tether",
    "tether-hermes",
    "tether-sync",
    "tether-inline",
    "tether-mutating",
    "pydantic-ai",
    "openai-agents",
    "langgraph",
    "smolagents",
    "pydantic-ai-sync",
    "openai-agents-sync",
    "langgraph-sync",
)
PEERS = ("pydantic-ai", "openai-agents", "langgraph", "smolagents")
SYNC_PEERS = ("pydantic-ai-sync", "openai-agents-sync", "langgraph-sync", "smolagents")
"""The peers' rows with plain sync tools: each runs them off its event loop in a thread (smolagents, a
synchronous framework, calls them directly): the rows `tether-sync` is judged against."""
TETHERS = ("parts", "tether", "tether-hermes", "tether-sync", "tether-inline", "tether-mutating")
BASELINE = os.environ.get("BENCH_BASELINE", "")
"""A checkout's `src` directory: each tether row runs with it too (`base:NAME`), interleaved."""
BASE = "base:"
STREAM_PAUSE_S = 0.020
"""How long the fake model keeps streaming after it has yielded a complete call (measure 4)."""
NAP_S = 0.010
RESULT_PREFIX = "RESULT "
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
"""Fresh processes per system, interleaved (all systems once, then again): on a shared VM a process can land
in a slow spell or on a busy core for its whole life, so each system keeps its quickest process."""

STARTS: list[float] = []
"""`perf_counter()` when a tool's body starts: one entry per executed call (also counts the calls)."""
MARKS: list[float] = []
"""`perf_counter()` just before the fake model yields the chunk that completes a call (measure 4)."""


@dataclass(frozen=True, slots=True)
class Scenario:
    tool_turns: int
    calls: int = 1
    tool: str = "add"
    streamed: bool = False
    """Measure 4: the model pauses after each call before ending its response."""

    def call_turn(self, turns_taken: int) -> bool:
        """Whether the model's next turn (after `turns_taken` model turns) calls tools."""
        return turns_taken < self.tool_turns


ONE, FIVE, FIFTY, LAG = Scenario(1), Scenario(5), Scenario(1, 50, "nap"), Scenario(1, streamed=True)


async def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first integer.
        b: The second integer.
    """
    STARTS.append(time.perf_counter())
    return a + b


async def nap() -> str:
    """Sleep 10 ms."""
    STARTS.append(time.perf_counter())
    await asyncio.sleep(NAP_S)
    return "rested"


def add_sync(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first integer.
        b: The second integer.
    """
    STARTS.append(time.perf_counter())
    return a + b


def nap_sync() -> str:
    """Sleep 10 ms."""
    STARTS.append(time.perf_counter())
    time.sleep(NAP_S)
    return "rested"


def call_id(turn: int, i: int) -> str:
    return f"c{turn}-{i}"


def arguments(scenario: Scenario, turn: int) -> dict[str, int]:
    """The tool's arguments in model turn `turn`: they differ per turn, so no call repeats an earlier one."""
    return {"a": turn, "b": 3} if scenario.tool == "add" else {}


def peer(module: str) -> Any:
    """A peer's module, typed `Any`: its package exists only in the bench environment."""
    return importlib.import_module(module)


class System:
    """One system under test: a full run for a scenario, and a streamed run for measure 4."""

    note = ""
    streams = True
    """Whether it has a streamed run (measure 4)."""

    async def run(self, scenario: Scenario) -> None:
        raise NotImplementedError

    async def streamed(self) -> None:
        raise NotImplementedError

    def internal_lags_s(self) -> list[float]:
        return []


# ----------------------------------------------------------------------------------------------- floor


class Floor(System):
    """The work itself: fake model, json.loads, pydantic validation, direct await, a message list."""

    def __init__(self) -> None:
        from pydantic import TypeAdapter
        from typing_extensions import TypedDict

        class AddArgs(TypedDict):
            a: int
            b: int

        self.adapters: dict[str, Any] = {"add": TypeAdapter(AddArgs), "nap": None}
        self.tools: dict[str, Callable[..., Awaitable[object]]] = {"add": add, "nap": nap}

    def reply(self, messages: list[dict[str, Any]], scenario: Scenario) -> dict[str, Any]:
        turn = sum(m["role"] == "assistant" for m in messages)
        if not scenario.call_turn(turn):
            return {"role": "assistant", "content": "5"}
        text = json.dumps(arguments(scenario, turn))
        calls = [
            {"id": call_id(turn, i), "name": scenario.tool, "arguments": text} for i in range(scenario.calls)
        ]
        return {"role": "assistant", "tool_calls": calls}

    async def call(self, call: dict[str, Any]) -> dict[str, Any]:
        args = json.loads(call["arguments"])
        adapter = self.adapters[call["name"]]
        if adapter is not None:
            args = adapter.validate_python(args)
        result = await self.tools[call["name"]](**args)
        return {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}

    async def run(self, scenario: Scenario) -> None:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "2+3?"}]
        while True:
            message = self.reply(messages, scenario)
            messages.append(message)
            calls = message.get("tool_calls")
            if not calls:
                return
            if len(calls) == 1:
                messages.append(await self.call(calls[0]))
            else:
                messages.extend(await asyncio.gather(*(self.call(c) for c in calls)))

    async def stream(self, messages: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        message = self.reply(messages, LAG)
        for call in message.get("tool_calls", ()):
            MARKS.append(time.perf_counter())
            yield {"call": call}
            await asyncio.sleep(STREAM_PAUSE_S)
        yield {"text": message.get("content", "")}

    async def streamed(self) -> None:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "2+3?"}]
        while True:
            tasks: list[asyncio.Task[dict[str, Any]]] = []
            calls: list[dict[str, Any]] = []
            async for chunk in self.stream(messages):
                if "call" in chunk:
                    calls.append(chunk["call"])
                    tasks.append(asyncio.create_task(self.call(chunk["call"])))
            messages.append({"role": "assistant", "tool_calls": calls})
            if not tasks:
                return
            messages.extend(await asyncio.gather(*tasks))


class FloorSync(Floor):
    """The floor with the same tools as plain sync functions, each run off the event loop with
    `await loop.run_in_executor(None, ...)`, as pydantic-ai and openai-agents run sync tools: the cost of the
    thread hop itself on this machine, against which `tether-sync` is judged. The loop's default executor is
    given 64 threads, as many as tether's sync tools get, so that 50 calls overlap alike (asyncio's default,
    min(32, CPUs + 4), would run them in waves)."""

    note = "the floor's tools as sync functions, each through loop.run_in_executor(None, ...)"

    def __init__(self) -> None:
        super().__init__()
        self.sync_tools: dict[str, Callable[..., object]] = {"add": add_sync, "nap": nap_sync}
        self.pool: Any = None

    async def call(self, call: dict[str, Any]) -> dict[str, Any]:
        args = json.loads(call["arguments"])
        adapter = self.adapters[call["name"]]
        if adapter is not None:
            args = adapter.validate_python(args)
        loop = asyncio.get_running_loop()
        if self.pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(max_workers=64)
            loop.set_default_executor(self.pool)
        result = await loop.run_in_executor(None, functools.partial(self.sync_tools[call["name"]], **args))
        return {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}


class Bound(Floor):
    """A lower bound for any runtime that keeps the records the issue asks for: the floor, plus, written
    straight-line with tether's own types and no framework, the run's seven events, the conversation as
    typed messages, each call as a ToolCall with an intent and a result journal entry, a timeout around the
    tool, its envelope and Kalygo's record. No guards, no parser, no redaction, no session."""

    note = "floor + tether's events, messages, 2 journal entries, timeout, record; no guards or parsing"

    def __init__(self) -> None:
        super().__init__()
        from tether import store, tool, types
        from tether.execution._invoke import invoke as run_tool

        self.store, self.t, self.run_tool = store, types, run_tool
        self.typed_tools = {name: tool(side_effects="none")(f) for name, f in self.tools.items()}
        self.events: list[Any] = []
        self.records: list[Any] = []

    async def call(self, call: dict[str, Any]) -> dict[str, Any]:
        t, run_id = self.t, "bound"
        typed = t.ToolCall(id=call["id"], name=call["name"], arguments=json.loads(call["arguments"]))
        self.events.append(t.ToolStartEvent(run_id=run_id, data="", call=typed))
        adapter = self.adapters[typed.name]
        args = typed.arguments if adapter is None else adapter.validate_python(typed.arguments)
        entry = self.store.JournalEntry
        entry(kind="intent", call_id=typed.id, tool=typed.name, created_at=time.time(), arguments=args)
        # tether's cheapest timeout: the clock is armed only if the tool waits (it returns an OkEnvelope)
        envelope = (await self.run_tool(self.typed_tools[typed.name], args, timeout_s=30)).envelope
        result: object = getattr(envelope, "data", None)
        entry(kind="result", call_id=typed.id, tool=typed.name, created_at=time.time(), arguments=args)
        self.records.append(
            t.ToolCallRecord(toolType="function", toolName=typed.name, input=args, output=result)
        )
        self.events.append(t.ToolEndEvent(run_id=run_id, call_id=typed.id, envelope=envelope))
        return {
            "role": "tool",
            "message": t.ToolResultMessage(call_id=typed.id, name=typed.name, envelope=envelope),
        }

    async def run(self, scenario: Scenario) -> None:
        t, run_id = self.t, "bound"
        self.events, self.records = [t.ChainStartEvent(run_id=run_id)], []
        typed: list[Any] = [t.SystemMessage(content=""), t.UserMessage(content="2+3?")]
        messages: list[dict[str, Any]] = [{"role": "user", "content": "2+3?"}]
        while True:
            self.events.append(t.ChatModelStartEvent(run_id=run_id, toolCalls=list(self.records)))
            message = self.reply(messages, scenario)
            messages.append(message)
            calls = message.get("tool_calls")
            if not calls:
                self.events.append(t.ChatModelStreamEvent(run_id=run_id, data=message["content"]))
                typed.append(t.AssistantMessage(content=message["content"]))
                self.events.append(t.ChainEndEvent(run_id=run_id, data=message["content"], reason="no_calls"))
                return
            typed.append(t.AssistantMessage(content=""))
            results = (
                [await self.call(calls[0])]
                if len(calls) == 1
                else await asyncio.gather(*map(self.call, calls))
            )
            messages.extend(results)
            typed.extend(r["message"] for r in results)


# ---------------------------------------------------------------------------------------------- tether


class Tether(System):
    """tether's Agent with a fake model: OpenAI Responses events (native) or hermes text, whole turns, every
    setting at its default. `sync`: the tools are plain functions (run off the event loop); `inline`: plain
    functions declared `inline=True` (run on the event loop); `mutating`: the tools do not declare themselves
    side-effect free (the default), so they are keyed for idempotency and never start while the model
    streams."""

    def __init__(
        self, dialect: str, *, sync: bool = False, mutating: bool = False, inline: bool = False
    ) -> None:
        from tether import Agent, FunctionModel, Model, tool
        from tether.dialects import get_dialect
        from tether.models import ModelChunk, ModelRequest, TextChunk
        from tether.types import AssistantMessage

        self.dialect = dialect
        self.note = (
            "native OpenAI Responses events"
            if dialect == "openai"
            else "hermes text dialect, parsed from one text chunk per turn"
        )
        if sync or inline:
            self.note += "; sync tools (time.sleep to nap)"
        if inline:
            self.note += ", `add` declared inline=True"
        if mutating:
            self.note += "; tools with the default side effects (mutating)"
        declare = tool() if mutating else tool(side_effects="none")
        functions: tuple[Callable[..., Any], Callable[..., Any]] = (
            (add_sync, nap_sync) if sync or inline else (add, nap)
        )
        tools = [declare(f) for f in functions]
        if inline:  # nap blocks (time.sleep): only add is declared inline
            tools[0] = tool(side_effects="none", inline=True)(add_sync)
        names = {"add": functions[0].__name__, "nap": functions[1].__name__}
        self.lags: list[float] = []

        def turn(request: ModelRequest, scenario: Scenario) -> list[Any]:
            """The turn as a test double takes it: provider JSON objects (native) or text."""
            taken = sum(isinstance(m, AssistantMessage) for m in request.messages)
            if not scenario.call_turn(taken):
                if dialect == "openai":
                    return [
                        {"type": "response.output_text.delta", "delta": "5"},
                        {"type": "response.completed"},
                    ]
                return ["5"]
            text = json.dumps(arguments(scenario, taken))
            if dialect == "openai":
                return [
                    *(
                        {
                            "type": "response.output_item.done",
                            "item": {
                                "type": "function_call",
                                "id": f"fc{call_id(taken, i)}",
                                "call_id": call_id(taken, i),
                                "name": names[scenario.tool],
                                "arguments": text,
                            },
                        }
                        for i in range(scenario.calls)
                    ),
                    {"type": "response.completed"},
                ]
            call = f'<tool_call>\n{{"name": "{names[scenario.tool]}", "arguments": {text}}}\n</tool_call>'
            return ["\n".join([call] * scenario.calls)]

        native = "openai" if dialect == "openai" else None

        def agent(scenario: Scenario) -> Agent:
            model = FunctionModel(
                lambda request: turn(request, scenario), chunk_size=10**9, native_dialect=native
            )
            return Agent(model, tools, dialect=dialect)

        self.agents = {s: agent(s) for s in (ONE, FIVE, FIFTY)}

        class Streaming(Model):
            native_dialect = native

            async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
                chunks = turn(request, LAG)
                if not LAG.call_turn(sum(isinstance(m, AssistantMessage) for m in request.messages)):
                    for chunk in chunks:
                        for event in typed(chunk):
                            yield event
                    return
                *calls, tail = chunks if dialect == "openai" else [*chunks, "\nDone."]
                for chunk in calls:
                    MARKS.append(time.perf_counter())
                    for event in typed(chunk):  # made from the wire's JSON after the mark, as a provider does
                        yield event
                await asyncio.sleep(STREAM_PAUSE_S)
                for event in typed(tail):
                    yield event

        read = get_dialect("openai").model_events

        def typed(chunk: Any) -> list[ModelChunk]:
            return [TextChunk(chunk)] if isinstance(chunk, str) else read(chunk)

        self.streaming = Agent(Streaming(), tools, dialect=dialect)

    async def run(self, scenario: Scenario) -> None:
        result = await self.agents[scenario].run("2+3?")
        assert result.reason == "no_calls", result.reason

    async def streamed(self) -> None:
        result = await self.streaming.run("2+3?")
        assert result.reason == "no_calls", result.reason
        self.lags.extend(result.tool_start_lag_s)

    def internal_lags_s(self) -> list[float]:
        return self.lags


class Parts(Tether):
    """tether's own parts (the parser, the executor with its guards and journal, the events and messages)
    called straight-line, with none of the loop around them (sessions, modes, limits, termination policies,
    streaming execution): what is left above it is the loop's own cost."""

    streams = False

    def __init__(self) -> None:
        super().__init__("openai")
        self.note = "tether's parser, executor, events and messages, straight-line; no loop"
        from tether import dialects, execution, types
        from tether.models import ModelRequest

        self.d, self.t, self.execution, self.request = dialects, types, execution, ModelRequest

    async def run(self, scenario: Scenario) -> None:
        t, agent = self.t, self.agents[scenario]
        run = self.execution.Run(principal=agent.principal)
        specs = agent.toolset.specs()
        system = agent.system_message(specs)
        index = self.d.ToolIndex(specs)
        messages: list[Any] = [system, t.UserMessage(content="2+3?")]
        events: list[Any] = [t.ChainStartEvent(run_id=run.id)]
        turn = 0
        while True:
            turn += 1
            events.append(t.ChatModelStartEvent(run_id=run.id, toolCalls=list(run.records)))
            parser = self.d.stream_parser(agent.dialect, index)
            request = self.request(messages=messages, tools=specs, system=system.content)
            async for chunk in agent.model.stream(request):
                for event in parser.feed_event(chunk):
                    if isinstance(event, self.d.TextDelta):
                        events.append(t.ChatModelStreamEvent(run_id=run.id, data=event.text))
            parser.close()
            parsed = parser.result
            messages.append(
                t.AssistantMessage(
                    content=parsed.content, reasoning=parsed.reasoning, tool_calls=tuple(parsed.calls)
                )
            )
            if not parsed.calls:
                events.append(t.ChainEndEvent(run_id=run.id, data=parsed.content, reason="no_calls"))
                return
            for call in parsed.calls:
                data = f"Starting tool: {call.name} with inputs: {call.arguments!r}"
                events.append(t.ToolStartEvent(run_id=run.id, data=data, call=call))
            journaled = [c.model_copy(update={"id": f"{c.id}@{turn}"}) for c in parsed.calls]
            envelopes = await agent.executor.execute_all(journaled, run)
            for call, envelope in zip(parsed.calls, envelopes, strict=True):
                events.append(t.ToolEndEvent(run_id=run.id, call_id=call.id, envelope=envelope))
                messages.append(t.ToolResultMessage(call_id=call.id, name=call.name, envelope=envelope))


# ------------------------------------------------------------------------------------------------ peers


class PydanticAI(System):
    """pydantic-ai `Agent` with `FunctionModel` (async functions, so nothing hops to a thread). `sync`: the
    tools are plain functions, which pydantic-ai runs off its event loop (`anyio.to_thread.run_sync`)."""

    def __init__(self, *, sync: bool = False) -> None:
        pai = peer("pydantic_ai")
        function = peer("pydantic_ai.models.function")
        messages = peer("pydantic_ai.messages")
        self.note = f"pydantic-ai-slim {pai.__version__}, FunctionModel"
        tools: list[Any] = [add, nap]
        if sync:
            self.note += "; sync tools, each through anyio.to_thread.run_sync"
            tools = [pai.Tool(add_sync, name="add"), pai.Tool(nap_sync, name="nap")]

        def taken(history: list[Any]) -> int:
            return sum(isinstance(m, messages.ModelResponse) for m in history)

        def respond(history: list[Any], scenario: Scenario) -> Any:
            turn = taken(history)
            if not scenario.call_turn(turn):
                return messages.ModelResponse(parts=[messages.TextPart("5")])
            parts = [
                messages.ToolCallPart(scenario.tool, arguments(scenario, turn), tool_call_id=call_id(turn, i))
                for i in range(scenario.calls)
            ]
            return messages.ModelResponse(parts=parts)

        def agent(scenario: Scenario) -> Any:
            async def reply(history: list[Any], info: Any) -> Any:
                return respond(history, scenario)

            return pai.Agent(function.FunctionModel(reply), tools=tools)

        async def stream(history: list[Any], info: Any) -> AsyncIterator[Any]:
            turn = taken(history)
            if LAG.call_turn(turn):
                delta = function.DeltaToolCall(
                    "add", json.dumps(arguments(LAG, turn)), tool_call_id=call_id(turn, 0)
                )
                MARKS.append(time.perf_counter())
                yield {0: delta}
                await asyncio.sleep(STREAM_PAUSE_S)
                return
            yield "5"

        self.agents = {s: agent(s) for s in (ONE, FIVE, FIFTY)}
        self.streaming = pai.Agent(function.FunctionModel(stream_function=stream), tools=tools)

    async def run(self, scenario: Scenario) -> None:
        result = await self.agents[scenario].run("2+3?")
        assert result.output == "5", result.output

    async def streamed(self) -> None:
        async def handler(ctx: Any, events: Any) -> None:
            async for _ in events:
                pass

        result = await self.streaming.run("2+3?", event_stream_handler=handler)
        assert result.output == "5", result.output


class OpenAIAgents(System):
    """openai-agents `Runner.run` with a `Model` subclass returning fixed Responses items; tracing off.
    `sync`: the tools are plain functions, which openai-agents runs off its event loop (`asyncio.to_thread`)."""

    def __init__(self, *, sync: bool = False) -> None:
        agents = peer("agents")
        interface = peer("agents.models.interface")
        items = peer("agents.items")
        usage = peer("agents.usage")
        responses = peer("openai.types.responses")
        version = peer("importlib.metadata").version("openai-agents")
        self.note = f"openai-agents {version}, Model subclass, tracing disabled"

        def taken(input: Any) -> int:
            if isinstance(input, str):
                return 0
            return sum(
                1
                for item in input
                if isinstance(item, dict)
                and item.get("type") == "function_call"  # pyright: ignore[reportUnknownMemberType] - SDK dicts
                and str(item.get("call_id", "")).endswith("-0")  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType] - SDK dicts
            )

        def output(turn: int, scenario: Scenario) -> list[Any]:
            if not scenario.call_turn(turn):
                text = responses.ResponseOutputText(text="5", type="output_text", annotations=[])
                message = responses.ResponseOutputMessage(
                    id="m", content=[text], role="assistant", status="completed", type="message"
                )
                return [message]
            return [
                responses.ResponseFunctionToolCall(
                    id=f"fc{call_id(turn, i)}",
                    call_id=call_id(turn, i),
                    name=scenario.tool,
                    arguments=json.dumps(arguments(scenario, turn)),
                    type="function_call",
                )
                for i in range(scenario.calls)
            ]

        class Fake(interface.Model):
            def __init__(self, scenario: Scenario) -> None:
                self.scenario = scenario

            async def get_response(
                self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
            ) -> Any:
                return items.ModelResponse(
                    output=output(taken(input), self.scenario), usage=usage.Usage(), response_id=None
                )

            async def stream_response(
                self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
            ) -> AsyncIterator[Any]:
                out = output(taken(input), LAG)
                for n, item in enumerate(out):
                    if item.type == "function_call":
                        MARKS.append(time.perf_counter())
                    yield responses.ResponseOutputItemDoneEvent(
                        item=item, output_index=n, sequence_number=n, type="response.output_item.done"
                    )
                if out[0].type == "function_call":
                    await asyncio.sleep(STREAM_PAUSE_S)
                response = responses.Response(
                    id="r",
                    created_at=0,
                    model="fake",
                    object="response",
                    output=out,
                    parallel_tool_calls=True,
                    tool_choice="auto",
                    tools=[],
                )
                yield responses.ResponseCompletedEvent(
                    response=response, sequence_number=len(out), type="response.completed"
                )

        tools = [agents.function_tool(add), agents.function_tool(nap)]
        if sync:
            self.note += "; sync tools, each through asyncio.to_thread"
            tools = [
                agents.function_tool(f, name_override=n) for f, n in ((add_sync, "add"), (nap_sync, "nap"))
            ]
        self.config = agents.RunConfig(tracing_disabled=True)
        self.runner = agents.Runner
        self.agents = {s: agents.Agent(name="a", model=Fake(s), tools=tools) for s in (ONE, FIVE, FIFTY, LAG)}

    async def run(self, scenario: Scenario) -> None:
        result = await self.runner.run(self.agents[scenario], "2+3?", run_config=self.config)
        assert result.final_output == "5", result.final_output

    async def streamed(self) -> None:
        result = self.runner.run_streamed(self.agents[LAG], "2+3?", run_config=self.config)
        async for _ in result.stream_events():
            pass
        assert result.final_output == "5", result.final_output


class LangGraph(System):
    """langgraph's prebuilt `create_react_agent` with a small `BaseChatModel` subclass. `sync`: the tools are
    plain functions, which langchain runs off the event loop (`loop.run_in_executor(None, ...)`)."""

    def __init__(self, *, sync: bool = False) -> None:
        warnings.filterwarnings("ignore", message=".*create_react_agent.*")
        language_models = peer("langchain_core.language_models")
        lc_messages = peer("langchain_core.messages")
        outputs = peer("langchain_core.outputs")
        lc_tools = peer("langchain_core.tools")
        prebuilt = peer("langgraph.prebuilt")
        metadata = peer("importlib.metadata")
        self.note = (
            f"langgraph {metadata.version('langgraph')}, langchain-core {metadata.version('langchain-core')}"
        )

        def message(history: list[Any], scenario: Scenario) -> Any:
            turn = sum(isinstance(m, lc_messages.AIMessage) for m in history)
            if not scenario.call_turn(turn):
                return lc_messages.AIMessage(content="5")
            calls = [
                {
                    "name": scenario.tool,
                    "args": arguments(scenario, turn),
                    "id": call_id(turn, i),
                    "type": "tool_call",
                }
                for i in range(scenario.calls)
            ]
            return lc_messages.AIMessage(content="", tool_calls=calls)

        class Fake(language_models.BaseChatModel):
            scenario: Any = ONE

            @property
            def _llm_type(self) -> str:
                return "fake"

            def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
                return self

            def _generate(
                self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any
            ) -> Any:
                return outputs.ChatResult(
                    generations=[outputs.ChatGeneration(message=message(messages, self.scenario))]
                )

            async def _agenerate(
                self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any
            ) -> Any:
                return self._generate(messages)

            async def _astream(
                self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kw: Any
            ) -> AsyncIterator[Any]:
                turn = sum(isinstance(m, lc_messages.AIMessage) for m in messages)
                if not LAG.call_turn(turn):
                    yield outputs.ChatGenerationChunk(message=lc_messages.AIMessageChunk(content="5"))
                    return
                chunk = {
                    "name": "add",
                    "args": json.dumps(arguments(LAG, turn)),
                    "id": call_id(turn, 0),
                    "index": 0,
                    "type": "tool_call_chunk",
                }
                MARKS.append(time.perf_counter())
                yield outputs.ChatGenerationChunk(
                    message=lc_messages.AIMessageChunk(content="", tool_call_chunks=[chunk])
                )
                await asyncio.sleep(STREAM_PAUSE_S)
                yield outputs.ChatGenerationChunk(message=lc_messages.AIMessageChunk(content=""))

        tools = [lc_tools.tool(add), lc_tools.tool(nap)]
        if sync:
            self.note += "; sync tools, each through loop.run_in_executor"
            tools = [lc_tools.tool(n)(f) for f, n in ((add_sync, "add"), (nap_sync, "nap"))]
        self.graphs = {
            s: prebuilt.create_react_agent(Fake(scenario=s), tools) for s in (ONE, FIVE, FIFTY, LAG)
        }

    async def run(self, scenario: Scenario) -> None:
        state = await self.graphs[scenario].ainvoke({"messages": [("user", "2+3?")]})
        assert state["messages"][-1].content == "5"

    async def streamed(self) -> None:
        last: Any = None
        stream = self.graphs[LAG].astream(
            {"messages": [("user", "2+3?")]}, stream_mode=["messages", "values"]
        )
        async for mode, chunk in stream:
            if mode == "values":
                last = chunk
        assert last is not None
        assert last["messages"][-1].content == "5"


class Smolagents(System):
    """smolagents `ToolCallingAgent` with a `Model` subclass; it is synchronous, its tools too.

    A run ends when the model calls `final_answer`, so "2 model turns" here is a call to `add`, then a
    call to `final_answer`. Parallel calls go to a thread pool (`max_tool_threads=50`); the tools sleep
    with `time.sleep` since smolagents tools are synchronous.
    """

    def __init__(self) -> None:
        smol = peer("smolagents")
        models = peer("smolagents.models")
        self.note = f"smolagents {smol.__version__}, sync tools, ends by calling final_answer"

        def taken(history: list[Any]) -> int:
            return sum(m.role == models.MessageRole.TOOL_CALL for m in history)

        def calls(turn: int, scenario: Scenario) -> list[Any]:
            if not scenario.call_turn(turn):
                function = models.ChatMessageToolCallFunction(name="final_answer", arguments={"answer": "5"})
                return [models.ChatMessageToolCall(function=function, id=call_id(turn, 0), type="function")]
            tool_name = "add_sync" if scenario.tool == "add" else "nap_sync"
            return [
                models.ChatMessageToolCall(
                    function=models.ChatMessageToolCallFunction(
                        name=tool_name, arguments=arguments(scenario, turn)
                    ),
                    id=call_id(turn, i),
                    type="function",
                )
                for i in range(scenario.calls)
            ]

        class Fake(models.Model):
            def __init__(self, scenario: Scenario) -> None:
                models.Model.__init__(self)
                self.scenario = scenario

            def generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
                return models.ChatMessage(
                    role=models.MessageRole.ASSISTANT,
                    content=None,
                    tool_calls=calls(taken(messages), self.scenario),
                )

            def generate_stream(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
                for n, call in enumerate(calls(taken(messages), LAG)):
                    function = models.ChatMessageToolCallFunction(
                        name=call.function.name, arguments=json.dumps(call.function.arguments)
                    )
                    delta = models.ChatMessageToolCallStreamDelta(
                        index=n, id=call.id, type="function", function=function
                    )
                    if call.function.name == "final_answer":
                        yield models.ChatMessageStreamDelta(content=None, tool_calls=[delta])
                        continue
                    MARKS.append(time.perf_counter())
                    yield models.ChatMessageStreamDelta(content=None, tool_calls=[delta])
                    time.sleep(STREAM_PAUSE_S)

        tools = [smol.tool(add_sync), smol.tool(nap_sync)]

        def agent(scenario: Scenario, stream: bool = False) -> Any:
            return smol.ToolCallingAgent(
                tools=tools,
                model=Fake(scenario),
                verbosity_level=-1,
                max_tool_threads=50,
                stream_outputs=stream,
            )

        self.agents = {s: agent(s) for s in (ONE, FIVE, FIFTY)}
        self.streaming = agent(LAG, stream=True)

    async def run(self, scenario: Scenario) -> None:
        assert self.agents[scenario].run("2+3?") == "5"

    async def streamed(self) -> None:
        assert self.streaming.run("2+3?") == "5"


# ---------------------------------------------------------------------------------------------- a child


def make(name: str) -> System:
    name = name.removeprefix(BASE)
    if name == "floor":
        return Floor()
    if name == "floor-sync":
        return FloorSync()
    if name == "bound":
        return Bound()
    if name in ("tether", "tether-hermes"):
        return Tether("openai" if name == "tether" else "hermes")
    if name in ("tether-sync", "tether-mutating", "tether-inline"):
        return Tether(
            "openai",
            sync=name == "tether-sync",
            mutating=name == "tether-mutating",
            inline=name == "tether-inline",
        )
    if name == "parts":
        return Parts()
    if name in ("pydantic-ai", "pydantic-ai-sync"):
        return PydanticAI(sync=name.endswith("-sync"))
    if name in ("openai-agents", "openai-agents-sync"):
        return OpenAIAgents(sync=name.endswith("-sync"))
    if name in ("langgraph", "langgraph-sync"):
        return LangGraph(sync=name.endswith("-sync"))
    if name == "smolagents":
        return Smolagents()
    raise SystemExit(f"unknown system {name!r}; one of {', '.join(SYSTEMS)}")


@dataclass(slots=True)
class Samples:
    wall: list[float]
    cpu: list[float]
    """CPU seconds of the whole process (all threads): what the run cost, robust to a busy machine."""


STEP_BETWEEN_RUNS = True
"""Whether the event loop takes a step between two runs (`await asyncio.sleep(0)`, not timed), as it does
in an application between two requests: a run that never waits on anything (the floor's, tether's with
async tools that answer at once) otherwise never lets the loop run at all, and whatever a run leaves to the
loop (a cancelled handle, a callback) piles up over thousands of runs and is paid by whichever later run
first waits. Every row alike, the floor and the peers included."""


async def samples(
    fn: Callable[[], Awaitable[None]], calls: int, *, budget_s: float, least: int, most: int
) -> Samples:
    """Times of `fn()` after warm-up, until `budget_s` is spent (at least `least` runs)."""
    for _ in range(max(5, least // 10)):
        await fn()
        if STEP_BETWEEN_RUNS:
            await asyncio.sleep(0)
    STARTS.clear()
    out = Samples([], [])
    deadline = time.perf_counter() + budget_s
    while len(out.wall) < most and (len(out.wall) < least or time.perf_counter() < deadline):
        cpu, start = time.process_time(), time.perf_counter()
        await fn()
        out.wall.append(time.perf_counter() - start)
        out.cpu.append(time.process_time() - cpu)
        if STEP_BETWEEN_RUNS:
            await asyncio.sleep(0)
    runs = len(out.wall)
    assert len(STARTS) == calls * runs, f"expected {calls} tool calls per run, got {len(STARTS) / runs}"
    return out


async def measure(name: str) -> dict[str, Any]:
    system = make(name)
    one = await samples(lambda: system.run(ONE), 1, budget_s=4, least=50, most=5000)
    five = await samples(lambda: system.run(FIVE), 5, budget_s=4, least=50, most=5000)
    fifty = await samples(lambda: system.run(FIFTY), 50, budget_s=2, least=20, most=200)
    MARKS.clear()
    STARTS.clear()
    if system.streams:
        await samples(system.streamed, 1, budget_s=0, least=30, most=30)
    marks = MARKS[-len(STARTS) :] if STARTS else []
    return {
        "note": system.note,
        "runs": [len(one.wall), len(five.wall)],
        "one_us": statistics.median(one.wall) * 1e6,
        "one_cpu_us": statistics.median(one.cpu) * 1e6,
        "five_us": statistics.median(five.wall) * 1e6,
        "five_cpu_us": statistics.median(five.cpu) * 1e6,
        "one_best_us": min(one.wall) * 1e6,
        "five_best_us": min(five.wall) * 1e6,
        "fifty_ms": statistics.median(fifty.wall) * 1e3,
        "lag_ms": [(s - m) * 1e3 for s, m in zip(STARTS, marks, strict=True)],
        "internal_lag_ms": [s * 1e3 for s in system.internal_lags_s()[-30:]],
    }


def child(name: str) -> None:
    result = asyncio.run(measure(name))
    print("\n" + RESULT_PREFIX + json.dumps(result), flush=True)  # on its own line, whatever a peer printed


# --------------------------------------------------------------------------------------------- parent


def spawn(name: str) -> dict[str, Any]:
    """Run one system in a fresh interpreter; on failure, the reason as `error`."""
    command = [sys.executable, __file__, "--child", name]
    env = None
    if name.startswith(BASE):  # the baseline's tether ahead of this checkout's
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [BASELINE, os.environ.get("PYTHONPATH")])),
        }
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX) :])
    lines = [s for s in done.stderr.strip().splitlines() if s.strip()]
    return {"error": lines[-1] if lines else f"exit status {done.returncode}, no result"}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def quickest(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The process with the lowest median run (interference only ever slows one down), noting the others."""
    ran = [r for r in rounds if "error" not in r]
    if not ran:
        return rounds[-1]
    best = min(ran, key=lambda r: r["one_us"])
    others = [f"{r['one_us']:,.1f}" for r in ran if r is not best]
    if others:
        best["note"] = f"{best['note']}; other processes' medians {', '.join(others)} µs".lstrip("; ")
    return best


def main() -> None:
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average before: {load()}")
    print(f"each system in {ROUNDS} fresh processes, interleaved; each keeps its quickest (BENCH_ROUNDS)")
    only = [n for n in os.environ.get("BENCH_ONLY", "").split(",") if n]
    names = [n for n in SYSTEMS if not only or n in only]
    if BASELINE:
        print(f"baseline: {BASELINE} (rows `{BASE}NAME`)")
        names += [BASE + n for n in names if n in TETHERS]
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for _ in range(ROUNDS):
        for name in names:
            rounds[name].append(spawn(name))
    results = {name: quickest(r) for name, r in rounds.items()}
    print(f"load average after: {load()}\n")
    ok = {n: r for n, r in results.items() if "error" not in r}
    floor = ok.get("floor", {k: float("nan") for k in ("one_us", "one_cpu_us", "one_best_us")})

    def failed(name: str) -> str:
        return f"did not run: {results[name]['error']}"

    print(row("one run: 2 model turns + 1 tool call", "median µs", "x floor", "CPU µs", "best µs", "setup"))
    print(row("---", "---:", "---:", "---:", "---:", "---"))
    for name, r in results.items():
        if "error" in r:
            print(row(name, "-", "-", "-", "-", failed(name)))
            continue
        wall, x_wall = r["one_us"], r["one_us"] / floor["one_us"]
        setup = f"{r['note']}; {r['runs'][0]} runs".lstrip("; ")
        print(
            row(
                name,
                f"{wall:,.1f}",
                f"{x_wall:,.0f}",
                f"{r['one_cpu_us']:,.1f}",
                f"{r['one_best_us']:,.1f}",
                setup,
            )
        )
    print()
    header = (
        "marginal cost of a tool turn",
        "1 tool turn µs",
        "5 tool turns µs",
        "per extra turn µs",
        "CPU µs",
        "best µs",
    )
    print(row(*header))
    print(row("---", "---:", "---:", "---:", "---:", "---:"))
    for name, r in results.items():
        if "error" in r:
            print(row(name, "-", "-", "-", "-", failed(name)))
            continue
        extra = [(r[f"five{k}"] - r[f"one{k}"]) / 4 for k in ("_us", "_cpu_us", "_best_us")]
        print(row(name, f"{r['one_us']:,.1f}", f"{r['five_us']:,.1f}", *(f"{e:,.1f}" for e in extra)))

    print()
    print(row("50 calls to a 10 ms async tool in one model turn", "median wall ms"))
    print(row("---", "---:"))
    for name, r in results.items():
        print(row(name, failed(name) if "error" in r else f"{r['fifty_ms']:.1f}"))

    print()
    pause = STREAM_PAUSE_S * 1e3
    title = f"stream-to-start lag (the model streams {pause:.0f} ms more after the call)"
    print(row(title, "median ms", "p95 ms", "tool starts"))
    print(row("---", "---:", "---:", "---"))
    for name, r in results.items():
        if "error" in r:
            print(row(name, "-", "-", failed(name)))
            continue
        lags: list[float] = r["lag_ms"]
        if not lags:
            print(row(name, "-", "-", "not measured: no streamed run"))
            continue
        when = "after the response ends" if statistics.median(lags) >= pause else "while the model streams"
        print(row(name, f"{statistics.median(lags):.3f}", f"{pct(lags, 0.95):.3f}", when))
        internal: list[float] = r["internal_lag_ms"]
        if internal:
            median, p95 = statistics.median(internal), pct(internal, 0.95)
            print(
                row(
                    f"{name}: its own `tool_start_lag_s`",
                    f"{median:.3f}",
                    f"{p95:.3f}",
                    "parser event to task start",
                )
            )

    targets(ok, floor)
    if BASELINE:
        compare(ok)


def compare(ok: dict[str, dict[str, Any]]) -> None:
    """Each tether row against the baseline's, from the same run: per-run and per-extra-turn medians."""
    print()
    print(row("A/B against the baseline (same run)", "per run µs", "baseline", "per extra turn µs", "baseline",
              "CPU per extra turn µs", "baseline"))  # fmt: skip
    print(row("---", "---:", "---:", "---:", "---:", "---:", "---:"))
    for name in TETHERS:
        if name not in ok or BASE + name not in ok:
            continue
        new, old = ok[name], ok[BASE + name]

        def cpu_extra(r: dict[str, Any]) -> float:
            return (r["five_cpu_us"] - r["one_cpu_us"]) / 4

        print(row(name, f"{new['one_us']:,.1f}", f"{old['one_us']:,.1f}", f"{extra_turn_us(new):,.1f}",
                  f"{extra_turn_us(old):,.1f}", f"{cpu_extra(new):,.1f}", f"{cpu_extra(old):,.1f}"))  # fmt: skip


def extra_turn_us(r: dict[str, Any]) -> float:
    return (r["five_us"] - r["one_us"]) / 4


def targets(ok: dict[str, dict[str, Any]], floor: dict[str, Any]) -> None:
    """Issue 13's targets, each against figures of this same run (median wall time)."""
    if "bound" not in ok or "floor" not in ok:
        return
    print()
    print(row("target (issue 13), median wall", "measured", "target", "verdict"))
    print(row("---", "---:", "---:", "---"))
    bound, peers = ok["bound"]["one_us"], [p for p in PEERS if p in ok]
    cheapest_peer = min((extra_turn_us(ok[p]), p) for p in peers) if peers else None

    def verdict(measured: float, target: float) -> str:
        return "met" if measured <= target else f"not met, {measured / target:.1f}x"

    for name in ("tether", "tether-hermes", "tether-sync", "tether-inline", "tether-mutating"):
        if name not in ok:
            continue
        r = ok[name]
        over = r["one_us"] - floor["one_us"]
        print(row(f"{name}: per-run overhead over the floor <= 2x the bound", f"{over:,.1f} µs",
                  f"{2 * bound:,.1f} µs", verdict(over, 2 * bound)))  # fmt: skip
        extra = extra_turn_us(r)
        print(row(f"{name}: per extra tool turn <= 50 µs", f"{extra:,.1f} µs", "50.0 µs", verdict(extra, 50)))
        if cheapest_peer is not None:
            peer_us, peer_name = cheapest_peer
            print(row(f"{name}: per extra tool turn below every peer's", f"{extra:,.1f} µs",
                      f"{peer_us:,.1f} µs ({peer_name})", verdict(extra, peer_us)))  # fmt: skip
        print(row(f"{name}: 50 x 10 ms fan-out, default settings", f"{r['fifty_ms']:.1f} ms", "13.0 ms",
                  verdict(r["fifty_ms"], 13.0)))  # fmt: skip
        if r["lag_ms"] and name != "tether-mutating":  # mutating calls wait for the end of the turn by design
            lag = statistics.median(r["lag_ms"])
            print(row(f"{name}: stream-to-tool-start median", f"{lag:.3f} ms", "0.300 ms", verdict(lag, 0.3)))
    if "tether-sync" in ok and "floor-sync" in ok:  # judged over its own floor too (absolute verdicts above)
        r, hop = ok["tether-sync"], ok["floor-sync"]
        over = r["one_us"] - hop["one_us"]
        print(row("tether-sync: per-run overhead over floor-sync <= 2x the bound", f"{over:,.1f} µs",
                  f"{2 * bound:,.1f} µs", verdict(over, 2 * bound)))  # fmt: skip
        extra = extra_turn_us(r) - extra_turn_us(hop)
        allowed = 50 - extra_turn_us(ok["floor"])  # the margin over its floor the 50 µs leaves an async row
        print(row("tether-sync: per extra tool turn over floor-sync's <= 50 µs - the floor's", f"{extra:,.1f} µs",
                  f"{allowed:,.1f} µs", verdict(extra, allowed)))  # fmt: skip
        print(row("tether-sync: 50 x 10 ms fan-out over floor-sync's", f"{r['fifty_ms'] - hop['fifty_ms']:.1f} ms",
                  f"{13.0 - ok['floor']['fifty_ms']:.1f} ms",
                  verdict(r["fifty_ms"] - hop["fifty_ms"], 13.0 - ok["floor"]["fifty_ms"])))  # fmt: skip
    sync_peers = [p for p in SYNC_PEERS if p in ok]
    if "tether-sync" in ok and sync_peers:
        extra = extra_turn_us(ok["tether-sync"])
        peer_us, peer_name = min((extra_turn_us(ok[p]), p) for p in sync_peers)
        print(row("tether-sync per extra turn below every peer's sync row", f"{extra:,.1f} µs",
                  f"{peer_us:,.1f} µs ({peer_name})", verdict(extra, peer_us)))  # fmt: skip
    if "tether-mutating" in ok and "tether" in ok:
        more = extra_turn_us(ok["tether-mutating"]) - extra_turn_us(ok["tether"])
        print(row("tether-mutating: extra per tool turn over `tether` <= 5 µs", f"{more:,.1f} µs", "5.0 µs",
                  verdict(more, 5.0)))  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main()
