"""Each equivalence a fast path of the loop relies on, pinned (as tests/execution/test_fast_paths.py does for
the executor's): a shortcut that stops being equivalent fails here, not in a user's run."""

import asyncio
import json
from typing import Any

import pytest

from tether import Agent, NeedsInput, ToolError, tool
from tether.dialects import dialect_names, get_dialect, stream_parser
from tether.loop import Session, core_tools
from tether.loop._calls import _describe  # pyright: ignore[reportPrivateUsage]
from tether.loop._loop import AgentRun
from tether.loop._offer import Offer
from tether.loop._secrets import SecretsAtRest, describe_call
from tether.models import ScriptedModel
from tether.tools import Toolset, redact
from tether.types import (
    AssistantMessage,
    ChatEvent,
    ChatModelStreamEvent,
    Event,
    NeedsEvent,
    ToolCall,
    ToolEndEvent,
    ToolStartEvent,
    UserMessage,
)

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool(side_effects="none")
def plain_log_in(user: str, password: str) -> str:
    """Log in."""
    return f"{user} in"


log_in = plain_log_in.with_spec(
    plain_log_in.spec.model_copy(
        update={
            "input_schema": {
                "type": "object",
                "properties": {
                    "user": {"type": "string"},
                    "password": {"type": "string", "format": "password"},
                },
                "required": ["user", "password"],
            }
        }
    )
)


@tool(side_effects="none")
def plain_issue_key() -> dict[str, str]:
    """A new API key."""
    return {"key": "sk-1"}


issue_key = plain_issue_key.with_spec(
    plain_issue_key.spec.model_copy(
        update={
            "output_schema": {"type": "object", "properties": {"key": {"type": "string", "x-secret": True}}}
        }
    )
)


def test_an_offer_is_secret_free_exactly_when_no_tool_s_schemas_mark_anything_secret() -> None:
    def offer(*tools: Any) -> Offer:
        toolset = Toolset(*tools)
        return Offer(toolset, toolset.tools())

    assert offer(add).secret_free
    assert offer(plain_log_in, plain_issue_key).secret_free
    assert offer().secret_free
    assert not offer(add, log_in).secret_free  # by its input schema
    assert not offer(issue_key).secret_free  # by its output schema


def _script() -> list[Any]:
    return [
        ["Adding. ", ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3})],
        [ToolCall(id="c2", name="made_up", arguments={"password": "hunter2"})],  # a tool it does not have
        "It is 5.",
    ]


async def test_a_redactor_over_a_secret_free_run_hands_out_every_event_as_it_is() -> None:
    """What the run does without one (`AgentRun`: no redactor when the offer is secret-free and no secret is
    known), the redactor would have done: each event of the run, shown in order, is the event itself."""
    agent = Agent(ScriptedModel(_script(), chunk_size=3), [add], dialect="hermes")
    result = await agent.run("2+3?")
    events: list[Event] = result.events
    assert any(type(e) is ChatModelStreamEvent for e in events)
    assert {e.event for e in events} >= {"on_tool_start", "on_tool_end", "on_chain_end"}
    redactor = SecretsAtRest(agent.offer().index.get)
    for event in events:
        assert redactor.shown(event) is event
        assert not redactor.active


def test_the_tool_start_line_of_a_secret_free_offer_is_the_one_redaction_would_make() -> None:
    toolset = Toolset(add, plain_log_in)
    offer = Offer(toolset, toolset.tools())
    assert offer.secret_free
    for call in (
        ToolCall(id="c1", name="add", arguments={"a": 2, "b": 3}),
        ToolCall(id="c2", name="plain_log_in", arguments={"user": "ada", "password": "hunter2"}),
        ToolCall(id="c3", name="made_up", arguments={"x": [1, {"y": None}]}),
    ):
        spec = offer.index.get(call.name)
        full = describe_call(
            call.name, call.arguments if spec is None else redact(call.arguments, spec.input_schema)
        )
        assert _describe(call, offer) == full


async def test_a_run_keeps_its_redactor_when_a_tool_marks_a_secret_or_a_secret_is_known() -> None:
    plain = Agent(ScriptedModel(["ok"]), [add])
    secret = Agent(ScriptedModel(["ok"]), [add, log_in])
    assert AgentRun(plain, None, None, None).events.secrets is None
    assert AgentRun(plain, None, Session(), None).events.secrets is None
    assert AgentRun(plain, None, Session(secrets={"hunter2"}), None).events.secrets is not None
    assert AgentRun(secret, None, None, None).events.secrets is not None


async def test_a_known_secret_is_still_redacted_from_a_secret_free_run_s_events() -> None:
    agent = Agent(ScriptedModel(["The password is hunter2, noted."], chunk_size=4), [add])
    result = await agent.run("remember it", session=Session(secrets={"hunter2"}))
    shown = "".join(e.data for e in result.events if type(e) is ChatModelStreamEvent)
    assert "hunter2" not in shown
    assert "***" in shown


@tool(side_effects="none")
async def ask_date() -> str:
    """Ask for a date."""
    raise NeedsInput(date="Which day?")


@tool(side_effects="none")
async def refuse() -> str:
    """Fail."""
    raise ToolError("NOT_FOUND", "nothing there")


@tool(side_effects="none")
async def plus(a: int, b: int) -> int:
    """Add (async: a sync tool's worker thread could end it after the others, so the order would vary)."""
    return a + b


async def test_the_events_after_each_call_of_a_batch_are_those_finish_makes() -> None:
    """A batch's calls end through `Calls._ended`, which sends `on_tool_end` alone for an ok envelope of a
    tool that is not a core tool, and goes through `finish`'s rest for the others: a needs envelope is
    followed by its `on_needs`, `send_chat` by its chat event; an async handler is awaited for each event."""
    calls: list[dict[str, Any]] = [
        {"type": "plus", "id": "a", "operation": "call", "parameters": {"a": 1, "b": 2}},
        {"type": "ask_date", "id": "n", "operation": "call", "parameters": {}},
        {"type": "send_chat", "id": "s", "operation": "call", "parameters": {"content": "hi"}},
        {"type": "refuse", "id": "r", "operation": "call", "parameters": {}},
    ]
    turns = [json.dumps({"toolCalls": calls}), "Done."]
    handled: list[Event] = []

    async def on_event(event: Event) -> None:
        await asyncio.sleep(0)
        handled.append(event)

    tools = [plus, ask_date, refuse, *core_tools("send_chat")]
    result = await Agent(ScriptedModel(turns), tools).run("go", on_event=on_event)
    assert handled == result.events  # the async handler awaited for every event
    assert [(e.call_id, e.envelope.ok) for e in result.events if isinstance(e, ToolEndEvent)] == [
        ("a", True),
        ("n", False),
        ("s", True),
        ("r", False),
    ]
    seen: list[Event] = []
    await Agent(ScriptedModel(turns), tools).run("go", on_event=seen.append)
    names = [
        (e.event, e.call_id if isinstance(e, ToolEndEvent | NeedsEvent) else None)
        for e in seen
        if not isinstance(e, ToolStartEvent)
    ]
    ended = names[names.index(("on_tool_end", "a")) :][:6]
    assert ended == [
        ("on_tool_end", "a"),
        ("on_tool_end", "n"),
        (NeedsEvent.model_fields["event"].default, "n"),
        ("on_tool_end", "s"),
        (ChatEvent.model_fields["event"].default, None),
        ("on_tool_end", "r"),
    ]
    assert [e.data for e in seen if isinstance(e, ChatEvent)] == ["hi"]


_TEXT_CALLS = [
    ToolCall(id="c1", name="get_weather", arguments={"city": "Paris", "days": 3}),
    ToolCall(id="c2", name="note", arguments={"text": 'a "quoted" } brace and </ok>', "n": None}),
]
_HERMES_ODD = [
    "<think>plan it</think>Sure.",  # reasoning
    "<think></think>ok",  # an empty reasoning block: reasoning "", not None
    'Let me.\n<tool_call>{"name": "add", "arguments": {not json}}</tool_call> and <tool_call>{"name": "add"',
    '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>',  # the whole-output path
    "",
]


def _turns_to_check() -> list[tuple[str, str]]:
    native = {"openai", "anthropic", "gemini", "auto"}
    outputs = [
        (d, "Checking.\n" + get_dialect(d).render_calls(_TEXT_CALLS) + "\nDone.") for d in dialect_names()
    ]
    outputs = [(d, text) for d, text in outputs if d not in native]
    return [*outputs, *(("hermes", text) for text in _HERMES_ODD), *(("auto", text) for text in _HERMES_ODD)]


@pytest.mark.parametrize(("dialect", "text"), _turns_to_check())
async def test_a_turn_keeps_what_the_parser_s_result_says(dialect: str, text: str) -> None:
    """The turn reads what the model said from the parser's events (`_Output`), not from a `ParseResult`: the
    message it stores and the problems it reports equal what `parser.result` gives, for every text dialect
    (streamed in 7-character pieces), `auto`, reasoning (an empty block too), failures and a bare call."""
    parser = stream_parser(dialect)
    for at in range(0, len(text), 7):
        parser.feed(text[at : at + 7])
    parser.close()
    expected = parser.result

    agent = Agent(ScriptedModel([text, "done.", "done.", "done."], chunk_size=7), [add], dialect=dialect)
    result = await agent.run("go")
    said = result.messages[2]
    assert said == AssistantMessage(
        content=expected.content,
        reasoning=expected.reasoning,
        tool_calls=tuple(expected.calls),
        raw="".join(text[at : at + 7] for at in range(0, len(text), 7)) if text else "",
    )
    told = [m.content for m in result.messages if isinstance(m, UserMessage)][1:2]
    if expected.errors:
        problems = "; ".join(e.message for e in expected.errors)
        assert told == [f"Some of your output could not be read as tool calls: {problems}"]


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini"])
async def test_a_native_turn_keeps_what_the_parser_s_result_says(dialect: str) -> None:
    """The same for a native dialect's turn (calls scripted as the provider's events)."""
    calls = [ToolCall(id="c0", name="add", arguments={"a": 1, "b": 2}), *_TEXT_CALLS]
    model = ScriptedModel([calls, "done."], native_dialect=dialect)
    result = await Agent(model, [add], dialect=dialect).run("go")
    said = result.messages[2]
    assert isinstance(said, AssistantMessage)
    assert [(c.id, c.name, c.arguments) for c in said.tool_calls] == [
        (c.id, c.name, c.arguments) for c in calls
    ]
    assert (said.content, said.reasoning) == ("", None)
    assert result.output == "done."
