"""The loop: termination policies, streaming execution, refusals fed back, limits and the event stream."""

import datetime
import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import pytest
from pydantic import TypeAdapter

from tether.exceptions import ModelError, UserError
from tether.loop import Agent, EndTurn, FinalResponse, Limits, NoCalls, Session
from tether.models import FunctionModel, ModelChunk, ModelRequest, ScriptedModel, TextChunk, Usage
from tether.tools import AbstractToolset, tool
from tether.types import (
    AssistantMessage,
    ChainEndEvent,
    ChatModelStreamEvent,
    ErrorEnvelope,
    ErrorEvent,
    Event,
    OkEnvelope,
    ToolCall,
    ToolEndEvent,
    ToolResultMessage,
    UserMessage,
)

pytestmark = pytest.mark.anyio

STARTED: list[str] = []


@tool(side_effects="none")
async def lookup(city: str) -> dict[str, Any]:
    """Look a city up."""
    STARTED.append(f"lookup:{city}")
    await anyio.sleep(0.01)
    return {"city": city, "high": 21}


@tool  # mutating by default
def book(city: str) -> str:
    """Book a trip."""
    STARTED.append(f"book:{city}")
    return f"booked {city}"


def calls(*items: tuple[str, dict[str, Any]]) -> str:
    return json.dumps(
        {
            "toolCalls": [
                {"type": n, "id": f"c{i}", "operation": n, "parameters": p} for i, (n, p) in enumerate(items)
            ]
        }
    )


async def test_no_calls_ends_the_run_with_the_models_text() -> None:
    agent = Agent(ScriptedModel(["Hello there."]), [lookup], dialect="hermes")
    result = await agent.run("Hi")
    assert (result.output, result.reason) == ("Hello there.", "no_calls")
    assert [e.event for e in result.events] == [
        "on_chain_start", "on_chat_model_start", *["on_chat_model_stream"] * 3, "on_chain_end",
    ]  # fmt: skip


async def test_end_turn_is_the_only_way_out_and_send_chat_does_not_end_it() -> None:
    model = ScriptedModel(
        [
            calls(("send_chat", {"content": "working on it"})),
            "I think I am done.",  # no call at all: reminded to call end_turn
            calls(("send_chat", {"content": "All done."}), ("end_turn", {})),
        ]
    )
    result = await Agent(model, [lookup], dialect="json_calls", termination=EndTurn()).run("go")
    assert (result.output, result.reason) == ("All done.", "end_turn")
    assert [e.data for e in result.events if e.event == "chat"] == ["working on it", "All done."]
    assert model.requests[2].messages[-1] == UserMessage(content=EndTurn().reminder)


async def test_a_side_effect_free_tool_starts_while_the_model_is_still_streaming() -> None:
    STARTED.clear()
    seen_before_end: list[str] = []

    first = '<tool_call>\n{"name": "lookup", "arguments": {"city": "Lisbon"}}\n</tool_call>\n'
    text = first + '<tool_call>\n{"name": "book", "arguments": {"city": "Lisbon"}}\n</tool_call>'
    cut = len(first)

    class SlowTail(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            self.requests.append(request)
            if len(self.requests) > 1:
                yield TextChunk("Done.")
                return
            yield TextChunk(text[:cut])
            await anyio.sleep(0.05)  # the model is still generating
            seen_before_end.extend(STARTED)
            yield TextChunk(text[cut:])

    result = await Agent(SlowTail([]), [lookup, book], dialect="hermes").run("trip")
    assert seen_before_end == ["lookup:Lisbon"]  # lookup ran mid-stream; book (mutating) had not
    assert STARTED == ["lookup:Lisbon", "book:Lisbon"]
    assert len(result.tool_start_lag_s) == 1
    assert result.tool_start_lag_s[0] < 0.05


async def test_a_model_failing_mid_stream_ends_with_error_and_chain_end_and_cancels_the_started_tool() -> (
    None
):
    cancelled: list[str] = []

    @tool(side_effects="none")
    async def slow(city: str) -> str:
        """Take a while."""
        try:
            await anyio.sleep(5)
        except anyio.get_cancelled_exc_class():
            cancelled.append(city)
            raise
        return city

    class Broken(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            yield TextChunk('<tool_call>{"name": "slow", "arguments": {"city": "Oslo"}}</tool_call>')
            await anyio.sleep(0.01)  # the tool has started
            raise ConnectionError("the provider hung up")

    with anyio.fail_after(2):
        result = await Agent(Broken([]), [slow], dialect="hermes").run("go")
    assert cancelled == ["Oslo"]  # not left running behind the failed turn
    assert (result.output, result.reason) == (None, "model_error")
    assert isinstance(result.error, ConnectionError)
    error, end = result.events[-2:]  # seed 004: the stream ends with `error`, then `on_chain_end`
    assert isinstance(error, ErrorEvent)
    assert error.data == {"error": "MODEL_ERROR", "message": "ConnectionError: the provider hung up"}
    assert isinstance(end, ChainEndEvent)
    assert end.reason == "model_error"


async def test_a_provider_error_is_reported_in_its_own_words() -> None:
    class Refused(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            raise ModelError("gpt at https://api.example: AuthenticationError: bad key")
            yield TextChunk("")  # an async generator

    seen: list[Event] = []
    result = await Agent(Refused([])).run("go", on_event=seen.append)
    assert [e.event for e in seen] == ["on_chain_start", "on_chat_model_start", "error", "on_chain_end"]
    assert seen[2] == ErrorEvent(
        run_id=result.events[0].run_id,
        data={"error": "MODEL_ERROR", "message": "gpt at https://api.example: AuthenticationError: bad key"},
    )


async def test_a_developers_mistake_in_the_model_still_raises() -> None:
    with pytest.raises(UserError, match="ran out of turns"):
        await Agent(ScriptedModel([])).run("go")


async def test_a_cancelled_run_closes_the_models_stream_at_once() -> None:
    closed: list[bool] = []

    class Endless(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            try:
                while True:
                    yield TextChunk("thinking... ")
            finally:
                closed.append(True)  # where a provider releases its HTTP response

    async def slow_viewer(event: Event) -> None:
        await anyio.sleep(0.001)  # e.g. sending each event to a browser

    with anyio.move_on_after(0.05):  # cancelled while the loop, not the model, is waiting
        await Agent(Endless([]), [lookup], dialect="hermes").run("go", on_event=slow_viewer)
    assert closed == [True]


async def test_results_return_to_the_model_in_call_order_in_the_dialects_feedback_format() -> None:
    model = ScriptedModel([calls(("book", {"city": "Oslo"}), ("lookup", {"city": "Rome"})), "ok"])
    result = await Agent(model, [lookup, book], dialect="json_calls").run("go")
    tool_results = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    assert [m.call_id for m in tool_results] == ["c0", "c1"]
    assert tool_results[0].envelope == OkEnvelope(data="booked Oslo")
    feedback = model.requests[1].messages[-1]
    assert isinstance(feedback, UserMessage)
    assert json.loads(feedback.content)["toolResults"][0]["id"] == "c0"


async def test_refusals_go_back_as_envelopes_and_a_retry_budget_stops_a_stubborn_model() -> None:
    bad = calls(("lookup", {"town": "Oslo"}))
    model = ScriptedModel([bad] * 5)
    result = await Agent(model, [lookup], dialect="json_calls", limits=Limits(retry_budget=2)).run("go")
    assert result.reason == "retry_budget"
    envelopes = [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)]
    assert len(envelopes) == 3
    assert all(isinstance(e, ErrorEnvelope) and e.error.code == "INVALID_ARGS" for e in envelopes)
    assert result.events[-2].event == "error"


async def test_limits_end_the_run_with_their_reason() -> None:
    forever = FunctionModel(lambda request: calls(("lookup", {"city": "Oslo"})))
    result = await Agent(forever, [lookup], dialect="json_calls", limits=Limits(max_iterations=3)).run("go")
    assert result.reason == "max_iterations"
    assert sum(1 for e in result.events if e.event == "on_chat_model_start") == 3
    result = await Agent(forever, [lookup], dialect="json_calls", limits=Limits(max_tool_calls=2)).run("go")
    assert result.reason == "max_tool_calls"


async def test_final_response_sends_the_format_and_validates_the_answer() -> None:
    schema = {"type": "object", "properties": {"high": {"type": "integer"}}, "required": ["high"]}
    model = ScriptedModel(
        [
            '```tool\nreturn lookup("Lisbon");\n```',
            "```tool\nreturn finalResponse();\n```",
            '{"temperature": 21}',  # wrong shape: asked again
            '```json\n{"high": 21}\n```',
        ]
    )
    agent = Agent(model, [lookup], dialect="fenced", termination=FinalResponse(schema=schema))
    result = await agent.run("How warm is Lisbon?")
    assert (result.output, result.reason) == ({"high": 21}, "final_response")
    assert model.requests[0].system == model.requests[3].system  # the system prompt never changes
    retry = model.requests[3].messages[-1]
    assert isinstance(retry, UserMessage)
    assert "missing required argument" in retry.content


async def test_the_tool_prompt_is_in_the_system_prompt_for_text_dialects() -> None:
    model = ScriptedModel(["hi"])
    await Agent(model, [lookup], dialect="fenced", system_prompt="Be brief.").run("x")
    system = model.requests[0].system
    assert system.startswith("Be brief.")
    assert "lookup" in system
    assert model.requests[0].tools == ()


async def test_native_dialects_offer_tools_through_the_api() -> None:
    model = ScriptedModel([[{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}]],
                          native_dialect="openai")  # fmt: skip
    result = await Agent(model, [lookup], termination=NoCalls()).run("x")
    assert result.output == "hi"
    assert [t.name for t in model.requests[0].tools] == ["lookup"]


class _Growing(AbstractToolset):
    """A toolset whose tools change between runs (a new mapping each time, as the contract asks)."""

    def __init__(self) -> None:
        self.mapping: dict[str, Any] = {"lookup": lookup}

    def tools(self) -> Mapping[str, Any]:
        return self.mapping


async def test_each_run_offers_the_toolset_as_it_is_then_and_a_tool_added_later_runs() -> None:
    @tool(side_effects="none")
    async def extra(x: int) -> int:
        """An extra tool."""
        return x + 1

    toolset = _Growing()
    model = ScriptedModel(["hi", [ToolCall(id="c1", name="extra", arguments={"x": 1})], "done"],
                          native_dialect="openai", delay_s=0.001)  # fmt: skip
    agent = Agent(model, toolset, termination=NoCalls())
    await agent.run("x")
    offer = agent.offer()
    assert offer is agent.offer()  # the same tools: worked out once
    assert offer.streamable("lookup")
    assert not offer.streamable("nothing_such")
    toolset.mapping = {**toolset.mapping, "extra": extra}
    result = await agent.run("y")
    assert [t.name for t in model.requests[0].tools] == ["lookup"]
    assert [t.name for t in model.requests[1].tools] == ["lookup", "extra"]
    assert agent.offer() is not offer
    ends = [e for e in result.events if isinstance(e, ToolEndEvent)]
    assert [type(e.envelope) for e in ends] == [OkEnvelope]
    assert result.tool_start_lag_s  # the new tool, side-effect free, started while the model streamed


async def test_token_and_wall_time_limits_end_the_run_with_their_reasons() -> None:
    chatty = FunctionModel(lambda request: "x" * 400 + calls(("lookup", {"city": "Oslo"})))
    result = await Agent(chatty, [lookup], dialect="json_calls", limits=Limits(max_tokens=150)).run("go")
    assert result.reason == "max_tokens"

    async def slow(request: ModelRequest) -> str:
        await anyio.sleep(0.05)
        return calls(("lookup", {"city": "Oslo"}))

    result = await Agent(
        FunctionModel(slow), [lookup], dialect="json_calls", limits=Limits(max_wall_time_s=0.1)
    ).run("go")
    assert result.reason == "max_wall_time"
    assert result.events[-1].event == "on_chain_end"


async def test_the_token_limit_counts_the_tokens_the_model_reports() -> None:
    # 200 characters would be ~50 tokens at 4 characters a token; the provider says each turn took 30.
    turn = [TextChunk("x" * 200), Usage(input_tokens=500), Usage(output_tokens=30)]
    looked = [*turn[:1], ToolCall(id="c0", name="lookup", arguments={"city": "Oslo"}), *turn[1:]]
    model = ScriptedModel([looked, looked, looked, turn])
    result = await Agent(model, [lookup], dialect="json_calls", limits=Limits(max_tokens=100)).run("go")
    # 30 + 30 + 30 reported; the fourth turn is stopped at its text, ~30 tokens at the run's ratio (the
    # estimate at 4 characters a token would have stopped the third)
    assert result.reason == "max_tokens"
    assert len(model.requests) == 4
    unreported = ScriptedModel([[TextChunk("x" * 400)]])
    result = await Agent(unreported, [lookup], dialect="json_calls", limits=Limits(max_tokens=100)).run("go")
    assert result.reason == "max_tokens"  # no report: 400 characters count as 100 tokens
    assert len(unreported.requests) == 1


async def test_a_call_id_reused_in_a_later_turn_is_a_new_call() -> None:
    STARTED.clear()
    same = calls(("book", {"city": "Rome"}))  # `c0` in both turns, same arguments
    result = await Agent(ScriptedModel([same, same, "Booked twice."]), [book], dialect="json_calls").run(
        "2 trips"
    )
    assert STARTED == ["book:Rome", "book:Rome"]
    assert result.output == "Booked twice."


@pytest.mark.parametrize("chunk_size", [3, 10_000])
async def test_two_calls_given_one_id_in_a_turn_each_run_once_with_their_own_result(chunk_size: int) -> None:
    STARTED.clear()
    turn = json.dumps({"toolCalls": [
        {"type": "lookup", "id": "x", "operation": "look up", "parameters": {"city": "Oslo"}},
        {"type": "lookup", "id": "x", "operation": "look up", "parameters": {"city": "Rome"}},
        {"type": "book", "id": "x", "operation": "book", "parameters": {"city": "Rome"}},
    ]})  # fmt: skip
    model = ScriptedModel([turn, "Done."], chunk_size=chunk_size)
    result = await Agent(model, [lookup, book], dialect="json_calls").run("go")
    assert sorted(STARTED) == ["book:Rome", "lookup:Oslo", "lookup:Rome"]
    results = [(m.call_id, m.envelope) for m in result.messages if isinstance(m, ToolResultMessage)]
    assert results == [
        ("x", OkEnvelope(data={"city": "Oslo", "high": 21})),
        ("x_2", OkEnvelope(data={"city": "Rome", "high": 21})),
        ("x_3", OkEnvelope(data="booked Rome")),
    ]


async def test_the_tool_call_limit_holds_inside_one_turn() -> None:
    STARTED.clear()
    many = calls(*(("lookup", {"city": f"City {n}"}) for n in range(8)))
    model = ScriptedModel([many, "Never asked."], chunk_size=10_000)
    result = await Agent(model, [lookup], dialect="json_calls", limits=Limits(max_tool_calls=3)).run("go")
    assert result.reason == "max_tool_calls"  # not the retry budget: the model did nothing wrong
    assert len(STARTED) == 3
    envelopes = [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)]
    refused = [e for e in envelopes if isinstance(e, ErrorEnvelope)]
    assert len(refused) == 5
    assert {e.error.code for e in refused} == {"QUOTA_EXCEEDED"}
    assert refused[0].error.message == "Quota exceeded: this run may make at most 3 tool calls."


@pytest.mark.parametrize("native", [False, True])
async def test_the_token_limit_stops_a_runaway_model_mid_stream(native: bool) -> None:
    closed: list[bool] = []

    class Runaway(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            try:
                while True:
                    piece = "and so on, " * 4
                    yield TextChunk(piece)
                    await anyio.lowlevel.checkpoint()
            finally:
                closed.append(True)

    model = Runaway([], native_dialect="openai" if native else None)
    with anyio.fail_after(2):
        result = await Agent(model, [lookup], limits=Limits(max_tokens=100)).run("go")
    assert result.reason == "max_tokens"
    assert closed == [True]
    streamed = "".join(e.data for e in result.events if isinstance(e, ChatModelStreamEvent))
    assert 400 <= len(streamed) < 500  # stopped at ~100 tokens of 4 characters, not after the turn
    assert result.events[-1].event == "on_chain_end"


async def test_the_wall_time_limit_stops_a_slow_model_and_a_slow_tool_mid_way() -> None:
    cancelled: list[str] = []

    @tool(side_effects="none")
    async def crawl(site: str) -> str:
        """Take very long."""
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.append(site)
            raise
        return site

    class Trickle(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            while True:
                yield TextChunk(".")
                await anyio.sleep(0.01)

    limits = Limits(max_wall_time_s=0.2)
    with anyio.fail_after(2):
        slow_model = await Agent(Trickle([]), [crawl], dialect="hermes", limits=limits).run("go")
    assert slow_model.reason == "max_wall_time"
    assert slow_model.events[-1].event == "on_chain_end"

    turn = '<tool_call>{"name": "crawl", "arguments": {"site": "example.com"}}</tool_call>'
    started = time.perf_counter()
    with anyio.fail_after(2):
        slow_tool = await Agent(ScriptedModel([turn]), [crawl], dialect="hermes", limits=limits).run("go")
    assert slow_tool.reason == "max_wall_time"
    assert time.perf_counter() - started < 1
    assert cancelled == ["example.com"]


async def test_a_run_cut_off_by_its_time_limit_leaves_every_call_answered_for_the_next_run() -> None:
    @tool(side_effects="none")
    async def quick(site: str) -> str:
        """Answer at once."""
        return f"{site} is up"

    @tool(side_effects="none")
    async def crawl(site: str) -> str:
        """Take very long."""
        await anyio.sleep(30)
        return site

    turn = (
        '<tool_call>{"name": "quick", "arguments": {"site": "a.example"}}</tool_call>'
        '<tool_call>{"name": "crawl", "arguments": {"site": "b.example"}}</tool_call>'
    )
    session = Session()
    first = Agent(ScriptedModel([turn]), [quick, crawl], dialect="hermes", limits=Limits(max_wall_time_s=0.2))
    with anyio.fail_after(2):
        cut = await first.run("check both", session=session)
    assert cut.reason == "max_wall_time"
    results = {m.name: m.envelope for m in session.messages if isinstance(m, ToolResultMessage)}
    assert results["quick"] == OkEnvelope(data="a.example is up")  # it finished: its result is kept
    stopped = results["crawl"]
    assert isinstance(stopped, ErrorEnvelope)
    assert stopped.error.code == "TIMEOUT"
    assert stopped.error.message == (
        "crawl was stopped before it finished: the run's time limit (0.2 s) was reached."
    )

    second = Agent(ScriptedModel(["Fine."]), [quick, crawl], dialect="hermes")
    await second.run("and now?", session=session)
    assert [m.kind for m in session.messages] == [
        "user", "assistant", "tool_result", "tool_result", "user", "assistant"
    ]  # fmt: skip


async def test_an_earlier_runs_unanswered_calls_are_answered_before_the_new_prompt() -> None:
    STARTED.clear()
    earlier = AssistantMessage(
        content="", tool_calls=(ToolCall(id="c0", name="lookup", arguments={"city": "Oslo"}),)
    )
    session = Session(messages=[UserMessage(content="weather?"), earlier])  # the process died here
    result = await Agent(ScriptedModel(["Sunny."]), [lookup], dialect="hermes").run("and?", session=session)
    assert result.output == "Sunny."
    assert [m.kind for m in session.messages] == ["user", "assistant", "tool_result", "user", "assistant"]
    assert STARTED == ["lookup:Oslo"]


async def test_history_given_to_a_run_is_read_as_a_session_is() -> None:
    """A run without history skips reading it (nothing to answer, turn 0); one with history still counts its
    turns (journal ids) and answers the calls it left open, as a session's run does."""
    STARTED.clear()
    earlier = AssistantMessage(
        content="", tool_calls=(ToolCall(id="c0", name="lookup", arguments={"city": "Oslo"}),)
    )
    agent = Agent(
        ScriptedModel([calls(("lookup", {"city": "Rome"})), "Sunny."]), [lookup], dialect="json_calls"
    )
    result = await agent.run("and?", history=[UserMessage(content="weather?"), earlier])
    assert [m.kind for m in result.messages] == [
        "system", "user", "assistant", "tool_result", "user", "assistant", "tool_result", "assistant"
    ]  # fmt: skip
    assert STARTED == ["lookup:Oslo", "lookup:Rome"]
    assert [e.call_id for e in agent.executor.journal.entries()][::2] == ["c0@1", "c0@2"]  # one turn before

    fresh = Agent(
        ScriptedModel([calls(("lookup", {"city": "Rome"})), "Sunny."]), [lookup], dialect="json_calls"
    )
    await fresh.run("and?")
    assert [e.call_id for e in fresh.executor.journal.entries()][::2] == ["c0@1"]


async def test_tool_end_events_come_as_each_call_of_a_batch_finishes() -> None:
    @tool  # mutating: waits for the end of the turn, then runs in a batch
    async def slow_write(path: str) -> str:
        """Write slowly."""
        await anyio.sleep(0.1)
        return path

    @tool
    async def fast_write(path: str) -> str:
        """Write fast."""
        return path

    turn = calls(("slow_write", {"path": "a"}), ("fast_write", {"path": "b"}))
    result = await Agent(ScriptedModel([turn, "Done."]), [slow_write, fast_write], dialect="json_calls").run(
        "go"
    )
    ends = [e.call_id for e in result.events if isinstance(e, ToolEndEvent)]
    assert ends == ["c1", "c0"]  # as they finished
    assert [m.call_id for m in result.messages if isinstance(m, ToolResultMessage)] == [
        "c0",
        "c1",
    ]  # call order


@pytest.mark.parametrize("dialect", ["json_calls", "openai"])
async def test_each_request_holds_the_conversation_as_it_was_at_that_turn(dialect: str) -> None:
    if dialect == "openai":

        def turn(n: int) -> list[dict[str, Any]]:
            item = {"type": "function_call", "id": f"fc{n}", "call_id": f"c{n}", "name": "lookup",
                    "arguments": json.dumps({"city": f"City {n}"})}  # fmt: skip
            return [{"type": "response.output_item.done", "item": item}, {"type": "response.completed"}]

        model = ScriptedModel([turn(0), turn(1), [{"type": "response.output_text.delta", "delta": "Done."}]])
        model.native_dialect = "openai"
    else:
        model = ScriptedModel([calls(("lookup", {"city": f"City {n}"})) for n in range(2)] + ["Done."])
    result = await Agent(model, [lookup], dialect=dialect).run("go")
    assert result.output == "Done."
    sizes = [len(r.messages) for r in model.requests]
    # system + user; then each tool turn adds the model's output and its result(s)
    assert sizes == [2, 4, 6]
    if dialect == "json_calls":  # text dialects: the model reads its own output and the results as text
        second = model.requests[2].messages
        assert [m.kind for m in second] == ["system", "user", "assistant", "user", "assistant", "user"]
        feedback = [m.content for m in second if isinstance(m, UserMessage)][1:]
        cities = [json.loads(f)["toolResults"][0]["result"]["data"]["city"] for f in feedback]
        assert cities == ["City 0", "City 1"]


@pytest.mark.parametrize("dialect", ["hermes", "json_calls"])
async def test_a_tool_returning_python_objects_does_not_break_the_run_or_its_events(dialect: str) -> None:
    class Forecast:
        def __repr__(self) -> str:
            return "Forecast(sunny)"

    @tool(side_effects="none")
    def forecast(city: str) -> dict[str, object]:
        """Forecast."""
        return {"city": city, "at": datetime.date(2026, 11, 23), "detail": Forecast()}

    turn = (
        '<tool_call>{"name": "forecast", "arguments": {"city": "Oslo"}}</tool_call>'
        if dialect == "hermes"
        else calls(("forecast", {"city": "Oslo"}))
    )
    model = ScriptedModel([turn, "Sunny."])
    result = await Agent(model, [forecast], dialect=dialect).run("weather?")
    assert result.output == "Sunny."
    feedback = model.requests[1].messages[-1]
    assert isinstance(feedback, UserMessage)
    assert "2026-11-23" in feedback.content
    assert "Forecast(sunny)" in feedback.content
    wire = TypeAdapter(list[Event]).dump_json(result.events)  # every event still serializes
    assert b"Forecast(sunny)" in wire


THOUGHT_CALL = '<tool_call>\n{"name": "book", "arguments": {"city": "Rome"}}\n</tool_call>'
REAL_CALL = '<tool_call>\n{"name": "lookup", "arguments": {"city": "Lisbon"}}\n</tool_call>'


@pytest.mark.parametrize("chunk_size", [1, 4, 1000])
async def test_with_reasoning_open_a_call_written_before_the_end_of_reasoning_is_not_run(
    chunk_size: int,
) -> None:
    STARTED.clear()
    # the template ended the prompt with <think>: the output shows only the block's end
    output = f"Booking Rome? {THOUGHT_CALL} No: they asked about Lisbon.</think>\n{REAL_CALL}"
    # every turn begins inside the block the template opened
    model = ScriptedModel([output, "Now answer.</think>Lisbon: 21."], chunk_size=chunk_size)
    result = await Agent(model, [lookup, book], dialect="hermes", reasoning_open=True).run("Lisbon?")
    assert STARTED == ["lookup:Lisbon"]
    assert result.output == "Lisbon: 21."
    first = next(m for m in result.messages if isinstance(m, AssistantMessage))
    assert first.reasoning == f"Booking Rome? {THOUGHT_CALL} No: they asked about Lisbon."
    assert [c.name for c in first.tool_calls] == ["lookup"]


async def test_without_reasoning_open_the_same_output_runs_the_call_written_in_reasoning() -> None:
    STARTED.clear()
    output = f"Booking Rome? {THOUGHT_CALL} No: they asked about Lisbon.</think>\n{REAL_CALL}"
    await Agent(ScriptedModel([output, "ok"]), [lookup, book], dialect="hermes").run("Lisbon?")
    assert sorted(STARTED) == ["book:Rome", "lookup:Lisbon"]


@pytest.mark.parametrize(
    ("dialect", "fix"),
    [(None, "pass a text dialect"), ("json_calls", "has no reasoning block")],
)
def test_reasoning_open_needs_a_text_dialect_with_a_reasoning_block(dialect: str | None, fix: str) -> None:
    model = ScriptedModel(["Hi"], native_dialect="openai") if dialect is None else ScriptedModel(["Hi"])
    with pytest.raises(UserError, match=fix):
        Agent(model, [lookup], dialect=dialect, reasoning_open=True)


async def test_fifty_calls_of_one_turn_all_run_at_once_with_the_default_settings() -> None:
    arrived: list[int] = []
    everyone = anyio.Event()

    @tool(side_effects="none")
    async def wait_for_all(n: int) -> int:
        """Wait until all fifty calls are running."""
        arrived.append(n)
        if len(arrived) == 50:
            everyone.set()
        with anyio.fail_after(5):  # only if they could not all start together
            await everyone.wait()
        return n

    model = ScriptedModel([calls(*(("wait_for_all", {"n": n}) for n in range(50))), "done"])
    result = await Agent(model, [wait_for_all], dialect="json_calls").run("go")
    assert result.reason == "no_calls"
    envelopes = [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)]
    assert envelopes == [OkEnvelope(data=n) for n in range(50)]


@pytest.mark.parametrize("native", [False, True])
async def test_a_model_yielding_bare_strings_is_told_to_yield_typed_events(native: bool) -> None:
    class Untyped(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
            yield "hi"  # how models streamed text before they yielded typed events

    model = Untyped([], native_dialect="openai" if native else None)
    with pytest.raises(UserError, match=r"TextChunk\(text\)"):
        await Agent(model, [lookup]).run("x")
