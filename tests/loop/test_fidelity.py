"""Seed fidelity of the loop (issue 11): core tools with any executor, Meowstik's streaming, Tool Injection's
reminder and typed final answers, Perin's planner/responder and deps, Kalygo's error events."""

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, TypeAdapter

from tether.exceptions import UserError
from tether.execution import Executor
from tether.loop import Agent, EndTurn, FinalResponse, NoCalls, core_tools
from tether.models import FunctionModel, ModelChunk, ModelRequest, OpenAIModel, ScriptedModel, TextChunk
from tether.tools import ToolContext, as_toolset, tool
from tether.types import (
    ChatEvent,
    ChatMessageV2,
    Event,
    OkEnvelope,
    SpeechEvent,
    ToolCallRecord,
    ToolResultMessage,
    UserMessage,
)

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
def lookup(city: str) -> dict[str, Any]:
    """Look a city up."""
    return {"city": city, "high": 21}


def calls(*items: tuple[str, dict[str, Any]]) -> str:
    return json.dumps(
        {
            "toolCalls": [
                {"type": n, "id": f"c{i}", "operation": n, "parameters": p} for i, (n, p) in enumerate(items)
            ]
        }
    )


# ------------------------------------------------------------------------------ core tools (item 11)


@pytest.mark.parametrize("streaming_execution", [True, False])
async def test_core_tools_are_the_loops_whatever_executor_the_agent_is_given(
    streaming_execution: bool,
) -> None:
    model = ScriptedModel(
        [
            calls(("lookup", {"city": "Oslo"}), ("send_chat", {"content": "Oslo: 21"})),
            calls(("say", {"utterance": "done"}), ("end_turn", {})),
        ]
    )
    agent = Agent(
        model,
        dialect="json_calls",
        termination=EndTurn(),
        executor=Executor([lookup]),  # knows nothing of send_chat, say or end_turn
        streaming_execution=streaming_execution,
    )
    with anyio.fail_after(5):
        result = await agent.run("Weather in Oslo?")
    assert result.reason == "end_turn"
    envelopes = {m.name: m.envelope for m in result.messages if isinstance(m, ToolResultMessage)}
    assert all(isinstance(e, OkEnvelope) for e in envelopes.values()), envelopes
    assert [e.data for e in result.events if isinstance(e, ChatEvent)] == ["Oslo: 21"]
    assert "lookup" in agent.system(), "the executor's tools are offered when the agent is given none"


def test_an_executor_that_has_the_core_tools_runs_them_itself() -> None:
    executor = Executor(as_toolset([lookup]) | core_tools())
    offered = Agent(ScriptedModel([]), dialect="json_calls", termination=EndTurn(), executor=executor)
    assert offered.core_executor is None
    assert sorted(offered.toolset.names()) == sorted(["lookup", *core_tools().names()])  # the executor's own
    own = Agent(ScriptedModel([]), [lookup], dialect="json_calls", termination=EndTurn(), executor=executor)
    assert own.core_executor is None
    assert own.toolset.names() == ["lookup", "send_chat", "say", "open_url", "end_turn"]


# ------------------------------------------------------------------------------- Meowstik (item 12)


async def test_send_chat_reaches_the_user_while_the_model_is_still_writing_its_other_calls() -> None:
    first = '{"toolCalls": [{"type": "send_chat", "id": "c1", "operation": "respond", "parameters": {"content": "Searching now..."}},'
    rest = ' {"type": "end_turn", "id": "e1", "operation": "end_turn", "parameters": {}}]}'
    shown_while_writing: list[str] = []
    chats: list[str] = []

    class Writing(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            self.requests.append(request)
            yield TextChunk(first)
            await anyio.sleep(0.05)  # still writing the rest of the JSON
            shown_while_writing.extend(chats)
            yield TextChunk(rest)

    def on_event(event: Event) -> None:
        if isinstance(event, ChatEvent):
            chats.append(event.data)

    result = await Agent(Writing([]), dialect="json_calls", termination=EndTurn()).run(
        "mail?", on_event=on_event
    )
    assert shown_while_writing == ["Searching now..."]
    assert result.reason == "end_turn"


async def test_say_runs_alongside_and_never_delays_the_next_model_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spoken_at: list[float] = []

    async def slow_engine(utterance: str, voice: str | None = None, style: str | None = None) -> None:
        await anyio.sleep(0.3)  # a speech engine taking its time
        spoken_at.append(time.monotonic())

    monkeypatch.setattr("tether.loop._speech.synthesize", slow_engine)
    asked_at: list[float] = []

    def reply(request: ModelRequest) -> str:
        asked_at.append(time.monotonic())
        if len(asked_at) == 1:
            return calls(
                ("say", {"utterance": "Let me check", "style": "cheerful"}), ("lookup", {"city": "Oslo"})
            )
        return calls(("end_turn", {}))

    result = await Agent(FunctionModel(reply), [lookup], dialect="json_calls", termination=EndTurn()).run(
        "go"
    )
    assert len(asked_at) == 2
    assert len(spoken_at) == 1
    assert asked_at[1] < spoken_at[0]  # the second turn did not wait for the speech
    events = [e.event for e in result.events]
    assert events.index("speech") < events.index("on_chain_end")  # but the run did
    (speech,) = [e for e in result.events if isinstance(e, SpeechEvent)]
    assert (speech.utterance, speech.style) == ("Let me check", "cheerful")


@pytest.mark.parametrize("streaming_execution", [True, False])
async def test_utterances_are_spoken_one_at_a_time_in_the_order_they_were_said(
    monkeypatch: pytest.MonkeyPatch, streaming_execution: bool
) -> None:
    running: list[str] = []

    async def engine(utterance: str, voice: str | None = None, style: str | None = None) -> None:
        running.append(utterance)
        assert len(running) == 1, f"{running} spoken at once"
        await anyio.sleep(0.05 if utterance == "first" else 0.01)
        running.remove(utterance)

    monkeypatch.setattr("tether.loop._speech.synthesize", engine)
    turn = calls(*(("say", {"utterance": u}) for u in ("first", "second", "third")), ("end_turn", {}))
    agent = Agent(
        ScriptedModel([turn]),
        dialect="json_calls",
        termination=EndTurn(),
        streaming_execution=streaming_execution,
    )
    result = await agent.run("go")
    assert [e.utterance for e in result.events if isinstance(e, SpeechEvent)] == ["first", "second", "third"]


# ------------------------------------------------------------------------- Tool Injection (item 13)


class Weather(BaseModel):
    city: str
    high: int


async def test_a_model_answering_without_finalresponse_is_reminded_to_call_it() -> None:
    model = ScriptedModel(
        [
            '{"city": "Oslo", "high": 21}',  # answers directly: reminded, as the seed's loop does
            "```tool\nreturn finalResponse();\n```",
            '{"city": "Oslo", "high": 21}',
        ]
    )
    result = await Agent(model, [lookup], dialect="fenced", termination=FinalResponse()).run("Weather?")
    assert (result.output, result.reason) == ({"city": "Oslo", "high": 21}, "final_response")
    assert model.requests[1].messages[-1] == UserMessage(content=FinalResponse().reminder)


async def test_a_pydantic_model_gives_the_format_and_the_output_is_a_validated_instance() -> None:
    model = ScriptedModel(
        [
            "```tool\nreturn finalResponse();\n```",
            '{"city": "Oslo", "high": "warm"}',  # not an int: asked again, with the problem named
            '{"city": "Oslo", "high": 21}',
        ]
    )
    result = await Agent(model, dialect="fenced", termination=FinalResponse(schema=Weather)).run("Weather?")
    assert (result.output, result.reason) == (Weather(city="Oslo", high=21), "final_response")
    asked = model.requests[1].messages[-1]
    assert isinstance(asked, UserMessage)
    assert json.dumps(Weather.model_json_schema()) in asked.content
    retry = model.requests[2].messages[-1]
    assert isinstance(retry, UserMessage)
    assert "high: Input should be a valid integer" in retry.content


async def test_output_type_is_final_response_with_that_type() -> None:
    model = ScriptedModel(["```tool\nreturn finalResponse();\n```", '{"city": "Oslo", "high": 21}'])
    agent = Agent(model, dialect="fenced", output_type=Weather)
    assert agent.termination == FinalResponse(schema=Weather)
    assert (await agent.run("Weather?")).output == Weather(city="Oslo", high=21)
    with pytest.raises(UserError, match="output_type"):
        Agent(model, output_type=Weather, termination=NoCalls())


def test_run_sync_runs_from_synchronous_code() -> None:
    result = Agent(ScriptedModel(["Hello."])).run_sync("Hi")
    assert (result.output, result.reason) == ("Hello.", "no_calls")


async def test_run_sync_inside_an_event_loop_is_a_clear_error() -> None:
    with pytest.raises(UserError, match=r"await agent\.run"):
        Agent(ScriptedModel(["Hello."])).run_sync("Hi")


def test_a_model_can_be_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the client is made, never called
    agent = Agent("openai:gpt-4o-mini", [lookup])
    assert (type(agent.model), agent.model.name, agent.dialect) == (
        OpenAIModel,
        "openai:gpt-4o-mini",
        "openai",
    )
    assert Agent("openai:gpt-4o-mini", [lookup], dialect="hermes").model.native_dialect is None
    with pytest.raises(UserError, match="provider:name"):
        Agent("gpt-4o-mini")


# ---------------------------------------------------------------------------------- Perin (item 14)


async def test_tools_receive_the_applications_deps_through_their_context() -> None:
    seen: list[Any] = []

    @tool(side_effects="none")
    def whoami(ctx: ToolContext) -> str:
        """Who is asking."""
        seen.append(ctx.deps)
        return "ok"

    db = {"users": ["aviad"]}
    turn = '<tool_call>{"name": "whoami", "arguments": {}}</tool_call>'
    agent = Agent(ScriptedModel([turn, "done", turn, "done"]), [whoami], dialect="hermes", deps=db)
    await agent.run("who?")
    await agent.run("who?", deps="per-run")
    assert seen == [db, "per-run"]


PLAN = 'Let me look.<tool_call>{"name": "lookup", "arguments": {"city": "Oslo"}}</tool_call>'


async def test_the_planners_text_never_reaches_the_user_only_the_responders() -> None:
    planner = ScriptedModel([PLAN, "Planner notes: all done."])
    agent = Agent(planner, [lookup], dialect="hermes", responder=ScriptedModel(["It is 21 in Oslo."]))
    result = await agent.run("Weather in Oslo?")
    shown = "".join(e.data for e in result.events if e.event == "on_chat_model_stream")
    assert shown == "It is 21 in Oslo."


class Down(ScriptedModel):
    """A provider that is down: it fails before writing anything."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        self.requests.append(request)
        raise ConnectionError("503 Service Unavailable")
        yield TextChunk("")  # an async generator


async def test_a_failing_planner_falls_back_to_the_responder_and_its_breaker_opens() -> None:
    planner = Down([])

    def reply_or_plan(request: ModelRequest) -> str:
        last = request.messages[-1]
        if isinstance(last, UserMessage) and last.content.startswith("Now write"):
            return "It is 21 in Oslo."  # asked to respond
        planned = any(m.kind == "assistant" for m in request.messages)
        return "no more calls" if planned else PLAN

    responder = FunctionModel(reply_or_plan)
    agent = Agent(planner, [lookup], dialect="hermes", responder=responder)
    for _ in range(4):
        result = await agent.run("Weather in Oslo?")
        assert (result.output, result.reason) == ("It is 21 in Oslo.", "no_calls")
        assert any(m.name == "lookup" for m in result.messages if isinstance(m, ToolResultMessage))
    # two model turns a run: the planner failed in the first three, then its breaker opened and it was
    # not asked again
    assert len(planner.requests) == 3


async def test_a_failing_responder_falls_back_to_the_planner() -> None:
    planner = ScriptedModel([PLAN, "no more calls", "It is 21 in Oslo."])
    result = await Agent(planner, [lookup], dialect="hermes", responder=Down([])).run("Weather in Oslo?")
    assert (result.output, result.reason) == ("It is 21 in Oslo.", "no_calls")


async def test_when_both_models_fail_the_run_ends_with_model_error() -> None:
    result = await Agent(Down([]), [lookup], dialect="hermes", responder=Down([])).run("Weather in Oslo?")
    assert result.reason == "model_error"
    assert [e.event for e in result.events][-2:] == ["error", "on_chain_end"]


# --------------------------------------------------------------------------------- Kalygo (item 15)


async def test_a_runs_answer_is_a_chat_message_v2_with_the_record_of_every_call() -> None:
    model = ScriptedModel(
        ['<tool_call>{"name": "lookup", "arguments": {"city": "Oslo"}}</tool_call>', "21 in Oslo."]
    )
    result = await Agent(model, [lookup], dialect="hermes").run("Weather?")
    message = result.chat_message()
    assert message == ChatMessageV2(
        role="assistant",
        content="21 in Oslo.",
        toolCalls=[
            ToolCallRecord(
                toolType="function",
                toolName="lookup",
                input={"city": "Oslo"},
                output={"city": "Oslo", "high": 21},
            )
        ],
    )
    TypeAdapter(ChatMessageV2).validate_json(
        message.model_dump_json()
    )  # the exported chat_message.v2 wire form
