"""Termination policies: tether's three judge turns as seeds 000 and 003 say, and a policy written by a user
runs end to end without the loop knowing it."""

import ast
import asyncio
import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

import tether.loop
from tether.loop import Agent, Continue, End, EndTurn, FinalResponse, Judge, NoCalls, TurnResult
from tether.models import FunctionModel, ModelRequest, ScriptedModel
from tether.tools import tool
from tether.types import (
    AssistantMessage,
    ChainEndEvent,
    ErrorEnvelope,
    ErrorEvent,
    ErrorInfo,
    OkEnvelope,
    ToolCall,
    UserMessage,
)

pytestmark = pytest.mark.anyio


@tool  # mutating by default
def book(city: str) -> str:
    """Book a trip."""
    return f"booked {city}"


def calls(*items: tuple[str, dict[str, Any]]) -> str:
    return json.dumps(
        {
            "toolCalls": [
                {"type": n, "id": f"c{i}", "operation": n, "parameters": p} for i, (n, p) in enumerate(items)
            ]
        }
    )


class EndAfterBookings:
    """A user's policy, written against the protocol only: the run ends once `wanted` bookings succeeded;
    in between, the model is told how many are left. It also wants the model to have `send_chat`."""

    def __init__(self, wanted: int):
        self.wanted = wanted

    @property
    def core_tools(self) -> tuple[str, ...]:
        return ("send_chat",)

    def start(self) -> Judge:
        return _Bookings(self.wanted)


class _Bookings:
    def __init__(self, wanted: int):
        self.left = wanted
        self.cities: list[str] = []

    def judge(self, turn: TurnResult) -> End | Continue:
        for call in turn.succeeded("book"):
            self.left -= 1
            self.cities.append(call.arguments["city"])
        if self.left <= 0:
            return End(self.cities, "booked")
        return Continue(f"{self.left} more to book." if turn.calls else None)


async def test_a_users_own_policy_ends_the_run_with_its_output_and_reason() -> None:
    model = ScriptedModel(
        [
            calls(("book", {"city": "Oslo"})),
            calls(("send_chat", {"content": "one down"})),
            calls(("book", {"city": "Rome"})),
        ]
    )
    agent = Agent(model, [book], dialect="json_calls", termination=EndAfterBookings(2))
    result = await agent.run("Book Oslo and Rome")
    assert (result.output, result.reason) == (["Oslo", "Rome"], "booked")
    assert model.requests[1].messages[-1] == UserMessage(content="1 more to book.")
    assert "send_chat" in agent.system()  # the policy's core tool is offered
    assert [e.data for e in result.events if e.event == "chat"] == ["one down"]
    end = result.events[-1]
    assert isinstance(end, ChainEndEvent)
    assert (end.data, end.reason) == (["Oslo", "Rome"], "booked")


async def test_a_policys_failure_reaches_the_user_as_an_error_event_named_after_its_reason() -> None:
    class GiveUp:
        core_tools: tuple[str, ...] = ()

        def start(self) -> Judge:
            return self

        def judge(self, turn: TurnResult) -> End | Continue:
            return End(None, "gave_up", problem="the model said nothing useful")

    result = await Agent(ScriptedModel(["hmm"]), dialect="hermes", termination=GiveUp()).run("go")
    assert result.reason == "gave_up"
    error, end = result.events[-2:]
    assert error == ErrorEvent(
        run_id=end.run_id, data={"error": "GAVE_UP", "message": "the model said nothing useful"}
    )
    assert end.event == "on_chain_end"


async def test_every_run_gets_its_own_judge_so_concurrent_runs_of_one_agent_do_not_mix() -> None:
    def reply(request: ModelRequest) -> str:
        turns = sum(isinstance(m, AssistantMessage) for m in request.messages)
        city = next(m.content for m in request.messages if isinstance(m, UserMessage))
        return calls(("book", {"city": city})) if turns == 0 else "done"

    agent = Agent(FunctionModel(reply), [book], dialect="json_calls", termination=EndAfterBookings(1))
    oslo, rome = await asyncio.gather(agent.run("Oslo"), agent.run("Rome"))
    assert (oslo.output, rome.output) == (["Oslo"], ["Rome"])


def turn(*calls: tuple[str, bool], content: str = "", unreadable: tuple[str, ...] = ()) -> TurnResult:
    error = ErrorEnvelope(error=ErrorInfo(code="INVALID_ARGS", message="no", recoverable=True))
    return TurnResult(
        content,
        [ToolCall(id=f"c{i}", name=name, arguments={}) for i, (name, _) in enumerate(calls)],
        [OkEnvelope(data=None) if ok else error for _, ok in calls],
        unreadable,
    )


def test_no_calls_ends_on_a_turn_without_calls_or_unreadable_output() -> None:
    judge = NoCalls().start()
    assert judge.judge(turn(content="hi")) == End("hi", "no_calls", reply=True)
    assert judge.judge(turn(("lookup", True))) == Continue()
    assert judge.judge(turn(unreadable=("unclosed call",))) == Continue()


def test_end_turn_ends_only_on_a_successful_end_turn_with_the_last_chat_as_output() -> None:
    judge = EndTurn().start()
    assert judge.judge(turn(content="done?")) == Continue(EndTurn().reminder)
    assert judge.judge(turn(("end_turn", False))) == Continue()
    assert judge.judge(turn(("end_turn", True), content="bye")) == End("bye", "end_turn", reply=True)


def test_final_response_asks_for_the_format_then_reads_and_re_asks_up_to_its_attempts() -> None:
    policy = FinalResponse(schema={"type": "integer"}, attempts=2)
    judge = policy.start()
    assert judge.judge(turn(content="working")) == Continue(policy.reminder)
    assert judge.judge(turn(("finalResponse", True))) == Continue(policy.request())
    retry = judge.judge(turn(content="twelve"))
    assert isinstance(retry, Continue)
    assert (retry.message or "").startswith("Your final answer is not valid JSON")
    end = judge.judge(turn(content='"12"'))
    assert isinstance(end, End)
    assert (end.output, end.reason) == (None, "invalid_final_response")
    assert policy.start().judge(turn(content="12")) == Continue(policy.reminder)  # a new run starts afresh


def test_tethers_policies_name_the_core_tools_they_need() -> None:
    assert NoCalls().core_tools == ()
    assert EndTurn().core_tools == ("send_chat", "say", "open_url", "end_turn")
    assert FinalResponse().core_tools == ("finalResponse",)


def _generated_twin(cls: type[Any]) -> type[Any]:
    """`cls` as `@dataclass(frozen=True, slots=True)` makes it, with its generated `__init__`."""
    fields = [(f.name, f.type, dataclasses.field(default=f.default)) for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(f"Generated{cls.__name__}", fields, frozen=True, slots=True)


@pytest.mark.parametrize(
    ("cls", "arguments"),
    [
        (TurnResult, [("done",), ("x", [ToolCall(id="c", name="t")], [OkEnvelope(data=1)], ["bad"])]),
        (End, [(None, "no_calls"), ("out", "end_turn", "a problem", True), ("o", "r", None)]),
    ],
)
def test_hand_written_inits_make_what_the_generated_ones_make(
    cls: type[Any], arguments: list[tuple[Any, ...]]
) -> None:
    # TurnResult and End set their slots directly (one of each a turn or run): same parameters, same defaults,
    # same fields set, still frozen and hashable as a generated frozen dataclass is.
    twin = _generated_twin(cls)
    ours, theirs = inspect.signature(cls).parameters, inspect.signature(twin).parameters
    assert [(p.name, p.default, p.kind) for p in ours.values()] == [
        (p.name, p.default, p.kind) for p in theirs.values()
    ]
    for args in arguments:
        made, generated = cls(*args), twin(*args)
        assert dataclasses.astuple(made) == dataclasses.astuple(generated)
        names = [f.name for f in dataclasses.fields(cls)]
        assert cls(**dict(zip(names, args, strict=False))) == made
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(made, names[0], "changed")
    assert hash(End(None, "x")) == hash(End(None, "x"))


def test_the_loop_names_no_policy_of_its_own() -> None:
    # regression (issue 13): termination policies were checked with `isinstance` in four places of the loop, so
    # a new policy meant editing it; now only the policies' module (and the Agent's output_type shortcut in it)
    # names them, and the loop sees a Termination
    loop = Path(tether.loop.__file__).parent
    policies = {"NoCalls", "EndTurn", "FinalResponse", "_FinalAnswer"}
    naming = {
        path.name
        for path in loop.glob("_*.py")
        if path.name not in ("_termination.py", "__init__.py")  # (the package exports them)
        and any(
            (isinstance(node, ast.Name) and node.id in policies)
            or (isinstance(node, ast.alias) and node.name in policies)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    }
    assert naming == set()
