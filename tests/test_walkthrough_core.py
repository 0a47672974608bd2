"""A new user's walk through the core's second draft (issue 13), doing what README.md and docs/ promise, with
public imports only: a termination policy of one's own, calls scripted in several dialects through
`render_calls`, a third-party dialect (registered, and installed as a package's entry point), a
`FunctionModel` streaming typed events, and the JSON Schemas read back against what a run produced.

Every step a user takes that failed, gave an unclear error or needed a private import was a finding; the
misuse steps at the end pin the errors that now name the fix."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import pytest

from tether import Agent, FunctionModel, NoCalls, ScriptedModel, ToolCall, UserError, tool
from tether.dialects import (
    Dialect,
    Emitter,
    JsonCalls,
    NativeParser,
    Opener,
    RegionParser,
    ToolIndex,
    get_dialect,
    parse,
    register_dialect,
    result_text,
)
from tether.loop import Continue, End, Judge, Termination, TurnResult
from tether.models import (
    Finish,
    Model,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    ToolCallDone,
    Usage,
)
from tether.schemas import SCHEMAS, schema_for
from tether.types import OkEnvelope, ToolResultMessage

BOOKED: list[str] = []


@tool(side_effects="none")
def book(city: str, nights: int = 1) -> str:
    """Book a hotel.

    Args:
        city: Where.
        nights: How many nights.
    """
    BOOKED.append(city)
    return f"booked {nights} night(s) in {city}"


# ----------------------------------------------------------------------------- a Termination of one's own


@dataclass
class _Counting:
    """One run's judge: it remembers how many bookings succeeded in this run only."""

    wanted: int
    seen: list[str] = field(default_factory=list[str])

    def judge(self, turn: TurnResult) -> End | Continue:
        self.seen += [c.arguments["city"] for c in turn.succeeded("book")]
        if len(self.seen) >= self.wanted:
            return End(list(self.seen), "all_booked")
        return Continue(f"{self.wanted - len(self.seen)} more to book.")


@dataclass(frozen=True)
class EndAfterBookings:
    """A stateful policy: the run ends once `wanted` bookings succeeded; each run gets a fresh judge."""

    wanted: int
    core_tools: tuple[str, ...] = ()

    def start(self) -> Judge:
        return _Counting(self.wanted)


def test_a_policy_of_ones_own_ends_the_run_and_each_run_has_its_own_judge() -> None:
    policy: Termination = EndAfterBookings(2)  # a structural type: no base class to inherit
    cities = ["Oslo", "Rome"]

    def reply(request: ModelRequest) -> list[Any]:  # each run asks for its next city
        # a text dialect's model reads results as the dialect's text (user messages), as a real model does
        done = sum(m.kind == "assistant" for m in request.messages)
        return [ToolCall(id=f"c{done}", name="book", arguments={"city": cities[done]})]

    agent = Agent(FunctionModel(reply), [book], dialect="hermes", termination=policy)

    async def two_runs_at_once() -> list[Any]:
        return list(await asyncio.gather(agent.run("Book two"), agent.run("Book two")))

    results = asyncio.run(two_runs_at_once())
    assert [(r.output, r.reason) for r in results] == [(["Oslo", "Rome"], "all_booked")] * 2
    told = [m.content for m in results[0].messages if m.kind == "user"]
    assert told == ["Book two", "1 more to book."]  # Continue(message) reached the model


def test_a_policy_may_name_core_tools_and_end_on_one() -> None:
    class EndOnEndTurn:
        core_tools = ("send_chat", "end_turn")

        def start(self) -> Judge:
            return self

        def judge(self, turn: TurnResult) -> End | Continue:
            chats = turn.succeeded("send_chat")
            if turn.succeeded("end_turn"):
                return End(chats[-1].arguments["content"] if chats else turn.content, "ended")
            return Continue()

    calls = [
        ToolCall(id="a", name="send_chat", arguments={"content": "Done."}),
        ToolCall(id="b", name="end_turn", arguments={}),
    ]
    result = Agent(ScriptedModel([calls]), dialect="json_calls", termination=EndOnEndTurn()).run_sync("Hi")
    assert (result.output, result.reason) == ("Done.", "ended")


# ---------------------------------------------------- calls scripted through render_calls, several dialects

DIALECTS = ["hermes", "pythonic", "yaml", "qwen3_coder_xml", "mistral", "kimi_k2", "harmony", "json_calls"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_calls_written_by_render_calls_run_in_the_loop(dialect: str) -> None:
    BOOKED.clear()
    calls = [
        ToolCall(id="c1", name="book", arguments={"city": 'Zürich "old town"', "nights": 2}),
        ToolCall(id="c2", name="book", arguments={"city": "Oslo"}),
    ]
    written = get_dialect(dialect).render_calls(calls)  # what docs/dialects.md and README promise
    assert [(c.name, c.arguments) for c in parse(written, dialect, [book.spec]).calls] == [
        (c.name, c.arguments) for c in calls
    ]
    model = ScriptedModel([written, "Both booked."], chunk_size=5)
    result = Agent(model, [book], dialect=dialect).run_sync("Book Zürich and Oslo")
    assert (result.output, result.reason) == ("Both booked.", "no_calls")
    assert sorted(BOOKED) == ["Oslo", 'Zürich "old town"']  # both at once: neither has side effects
    answers = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    assert [result_text(m.envelope) for m in answers] == [
        '{"ok":true,"data":"booked 2 night(s) in Zürich \\"old town\\""}',
        '{"ok":true,"data":"booked 1 night(s) in Oslo"}',
    ]


def test_a_toolcall_in_a_scripted_turn_is_written_in_the_agents_dialect_native_ones_too() -> None:
    call = ToolCall(id="call_9", name="book", arguments={"city": "Lima"})
    model = ScriptedModel([["Booking.", call], "Booked."], native_dialect="openai")
    result = Agent(model, [book]).run_sync("Book Lima")  # the model's native dialect by default
    assert (result.output, model.requests[0].tools) == ("Booked.", (book.spec,))
    assert [c.id for m in result.messages if m.kind == "assistant" for c in m.tool_calls] == ["call_9"]


# ---------------------------------------------------------------------------------- a third-party dialect


class Tagged(Dialect):
    """docs/dialects.md's example: data only."""

    name: ClassVar[str] = "test_walk_tagged"
    openers = (
        Opener("<call>", ends=("</call>",), body=JsonCalls(announce=True)),
        Opener("<think>", "reasoning", ends=("</think>",)),
        Opener("<|eot|>", "drop"),
    )

    def render_tools(self, tools: ToolIndex) -> str:
        return 'Call a tool as <call>{"name": ..., "arguments": {...}}</call>.'

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(
            f"<call>{json.dumps({'name': c.name, 'arguments': c.arguments})}</call>" for c in calls
        )


class KeyValues:
    """docs/dialects.md's body format of one's own: `name k=v k=v`."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        name, *pairs = text.split()
        if not name.isidentifier():
            out.fail("a call starts with its name", span, text)
            return
        out.call(name, dict(p.split("=", 1) for p in pairs), span)


class Lines(Dialect):
    name: ClassVar[str] = "test_walk_lines"
    openers = (Opener("!call ", ends=("\n",), body=KeyValues(), line_start=True),)

    def render_tools(self, tools: ToolIndex) -> str:
        return "Write a line: !call name key=value ..."

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(
            "!call " + " ".join([c.name, *(f"{k}={v}" for k, v in c.arguments.items())]) + "\n" for c in calls
        )


def test_a_registered_dialect_runs_in_the_loop_as_a_builtin_does() -> None:
    # (replace=True: a test may run twice in one process; a program registers its dialect once, at import)
    tagged, lines = register_dialect(Tagged(), replace=True), register_dialect(Lines(), replace=True)
    assert register_dialect(tagged) is tagged  # the same instance again: nothing to refuse
    BOOKED.clear()
    text = "<think>hm</think>Sure.<|eot|>" + tagged.render_calls(
        [ToolCall(id="x", name="book", arguments={"city": "Oslo"})]
    )
    result = Agent(ScriptedModel([text, "Done."], chunk_size=3), [book], dialect="test_walk_tagged").run_sync(
        "Go"
    )
    assert (result.output, BOOKED) == ("Done.", ["Oslo"])
    said = [(m.content, m.reasoning) for m in result.messages if m.kind == "assistant"]
    assert said == [("Sure.", "hm"), ("Done.", None)]
    # the body format of one's own: its failure reaches the model, the good call runs
    BOOKED.clear()
    written = lines.render_calls([ToolCall(id="y", name="book", arguments={"city": "Rome"})])
    result = Agent(
        ScriptedModel(["!call 9x\n" + written, "Done."]), [book], dialect="test_walk_lines"
    ).run_sync("Go")
    assert BOOKED == ["Rome"]
    assert "a call starts with its name" in str([m.content for m in result.messages if m.kind == "user"])


_PACKAGE = """
import json
from tether.dialects import Dialect, JsonCalls, Opener


class Angle(Dialect):
    name = "walk_angle"
    openers = (Opener("<<", ends=(">>",), body=JsonCalls()),)

    def render_tools(self, tools):
        return "Write <<{json}>>."

    def render_calls(self, calls):
        return "".join("<<" + json.dumps({"name": c.name, "arguments": c.arguments}) + ">>" for c in calls)
"""

_USE = """
from tether import Agent, ScriptedModel, ToolCall, tool
from tether.dialects import dialect_names, get_dialect

@tool(side_effects="none")
def echo(text: str) -> str:
    return text

call = get_dialect("walk_angle").render_calls([ToolCall(id="c", name="echo", arguments={"text": "hi"})])
result = Agent(ScriptedModel([call, "ok"]), [echo], dialect="walk_angle").run_sync("x")
print(result.output, "walk_angle" in dialect_names(), result.messages[3].envelope.data)
"""


def _installed(tmp_path: Path, module: str, value: str) -> Path:
    """A package installed as pip would: its module and a dist-info whose entry_points.txt names `value`."""
    (tmp_path / f"{module}.py").write_text(_PACKAGE)
    info = tmp_path / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[tether.dialects]\nangle = {value}\n")
    return tmp_path


def _run(path: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(path)},
    )


def test_a_dialect_installed_through_the_entry_point_group_is_found_by_name(tmp_path: Path) -> None:
    done = _run(_installed(tmp_path, "walk_plugin", "walk_plugin:Angle"), _USE)
    assert (done.returncode, done.stdout.strip()) == (0, "ok True hi"), done.stderr


def test_a_broken_entry_point_is_named_every_time_it_is_needed(tmp_path: Path) -> None:
    path = _installed(tmp_path, "walk_broken", "walk_broken:Missing")
    code = (
        "from tether.dialects import get_dialect\nfrom tether import UserError\n"
        "for _ in range(2):\n    try:\n        get_dialect('walk_angle')\n"
        "    except UserError as e:\n        print(e)\n"
        "print(get_dialect('hermes').name)"  # the built-ins still work
    )
    done = _run(path, code)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[0] == lines[1]
    assert lines[0].startswith("entry point 'angle' in tether.dialects (walk_broken:Missing) failed to load")
    assert "fix or uninstall the package that declares it" in lines[0]
    assert lines[2] == "hermes"


# ----------------------------------------------------------------------------- a FunctionModel, typed events


def test_a_function_model_streams_typed_events_in_a_text_dialect() -> None:
    BOOKED.clear()
    call = get_dialect("hermes").render_calls([ToolCall(id="c", name="book", arguments={"city": "Oslo"})])

    def reply(request: ModelRequest) -> list[Any]:
        if not any(m.kind == "assistant" for m in request.messages):  # the first turn
            return [
                ReasoningChunk("They want Oslo."),
                TextChunk(call[:9]),
                TextChunk(call[9:]),
                Usage(10, 5),
                Finish("stop"),
            ]
        return [TextChunk("Booked."), Finish("stop")]

    result = Agent(FunctionModel(reply), [book], dialect="hermes").run_sync("Book Oslo")
    assert (result.output, BOOKED) == ("Booked.", ["Oslo"])
    assert [m.reasoning for m in result.messages if m.kind == "assistant"] == ["They want Oslo.", None]


def test_a_function_model_streams_a_native_call_in_pieces() -> None:
    BOOKED.clear()

    async def reply(request: ModelRequest) -> list[Any]:
        if any(m.kind == "tool_result" for m in request.messages):
            return [TextChunk("Booked.")]
        return [
            TextChunk("Booking. "),
            ToolCallChunk(0, "call_1", "book", '{"city": "Os'),
            ToolCallChunk(0, arguments='lo", "nights": 3}'),
            ToolCallDone(0),
            Finish("tool_calls"),
        ]

    result = Agent(FunctionModel(reply, native_dialect="openai"), [book]).run_sync("Book Oslo")
    assert (result.output, BOOKED) == ("Booked.", ["Oslo"])
    assert [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)] == [
        OkEnvelope(data="booked 3 night(s) in Oslo")
    ]


def test_a_native_call_sent_to_a_text_dialect_is_told_to_the_model_not_dropped() -> None:
    turns = iter([[TextChunk("On it."), ToolCallDone(0, "c1", "book", {"city": "Oslo"})], "Sorry."])
    result = Agent(FunctionModel(lambda _: next(turns)), [book], dialect="hermes").run_sync("Book Oslo")
    told = [m.content for m in result.messages if m.kind == "user"][1]
    assert told.startswith("Some of your output could not be read as tool calls: a native tool call (book)")
    assert "hermes dialect" in told


# ------------------------------------------------------------------------------------------ JSON Schemas


def test_what_a_run_produced_validates_against_the_exported_schemas() -> None:
    call = ToolCall(id="c1", name="book", arguments={"city": "Oslo"})
    result = Agent(ScriptedModel([[call], "Booked."]), [book], dialect="hermes").run_sync("Book Oslo")
    assert {"agent_streaming_events.v1", "envelope.v1", "tool_call.v1", "chat_message.v2"} <= set(SCHEMAS)
    events = schema_for("agent_streaming_events.v1")
    for event in result.events:
        jsonschema.validate(event.model_dump(mode="json", exclude_none=True), events)
    for message in result.messages:
        if isinstance(message, ToolResultMessage):
            jsonschema.validate(json.loads(result_text(message.envelope)), schema_for("envelope.v1"))
        for made in getattr(message, "tool_calls", ()):
            jsonschema.validate(made.model_dump(mode="json", exclude_none=True), schema_for("tool_call.v1"))
    jsonschema.validate(
        result.chat_message().model_dump(mode="json", exclude_none=True), schema_for("chat_message.v2")
    )
    committed = Path(__file__).parents[1] / "schemas" / "envelope.v1.json"
    assert json.loads(committed.read_text("utf-8")) == schema_for("envelope.v1")  # the files are these


# ------------------------------------------------------------------------------- misuse names the fix


class _Echo:
    core_tools: tuple[str, ...] = ()

    def __init__(self, verdict: object = None, start: object = None, raises: Exception | None = None):
        self.verdict, self.started, self.raises = verdict, start, raises

    def start(self) -> Any:
        return self if self.started is None else self.started

    def judge(self, turn: TurnResult) -> Any:
        if self.raises is not None:
            raise self.raises
        return self.verdict


@dataclass(frozen=True)
class _Policy:
    core_tools: object

    def start(self) -> Judge:
        return NoCalls()


@pytest.mark.parametrize(
    ("policy", "fix"),
    [
        (NoCalls, r"takes a policy, not the class NoCalls: write termination=NoCalls\(\)"),
        (object(), r"takes a Termination: an object with `core_tools`"),
        (_Policy("end_turn"), "takes a Termination"),
        (_Policy(("nope",)), r"'nope': not a core tool"),
    ],
    ids=["a class", "no policy", "a str of core tools", "an unknown core tool"],
)
def test_a_policy_the_loop_cannot_use_is_refused_when_the_agent_is_made(policy: Any, fix: str) -> None:
    with pytest.raises(UserError, match=fix):
        Agent(ScriptedModel(["x"]), [book], dialect="hermes", termination=policy)


@pytest.mark.parametrize(
    ("policy", "fix"),
    [
        (_Echo(None), r"the judge of _Echo returned None: a judge returns End\(output, reason\)"),
        (_Echo(True), "returned True"),
        (_Echo(Continue(42)), r"returned Continue\(message=42\)"),  # pyright: ignore[reportArgumentType]
        (_Echo(End("o", None)), "with a str reason"),  # pyright: ignore[reportArgumentType]
        (_Echo(start=42), r"_Echo.start\(\) returned 42, not a Judge"),
    ],
    ids=["None", "a bool", "a message that is no str", "no reason", "start gives no judge"],
)
def test_a_judge_answering_garbage_is_a_user_error_naming_the_fix(policy: _Echo, fix: str) -> None:
    with pytest.raises(UserError, match=fix):
        Agent(ScriptedModel(["x"]), [book], dialect="hermes", termination=policy).run_sync("x")


def test_a_judge_that_raises_raises_its_own_error_saying_where_it_came_from() -> None:
    policy = _Echo(raises=LookupError("my bug"))
    with pytest.raises(LookupError, match="my bug") as raised:
        Agent(ScriptedModel(["x"]), [book], dialect="hermes", termination=policy).run_sync("x")
    assert raised.value.__notes__[0].startswith(
        "raised by the judge of the agent's termination policy (_Echo)"
    )

    class Failing(_Echo):
        def start(self) -> Any:
            raise LookupError("my start bug")

    with pytest.raises(LookupError, match="my start bug") as raised:
        Agent(ScriptedModel(["x"]), [book], dialect="hermes", termination=Failing()).run_sync("x")
    assert raised.value.__notes__ == ["raised by Failing.start(), the run's termination policy"]


@pytest.mark.parametrize(
    ("turn", "fix"),
    [(None, "a model turn is None"), ([TextChunk("a"), 42], r"a model turn holds 42 \(int\)")],
    ids=["a function that forgot to return", "a turn holding no event"],
)
def test_a_function_model_answering_garbage_names_what_a_turn_holds(turn: Any, fix: str) -> None:
    with pytest.raises(UserError, match=fix + ".*typed model events"):
        Agent(FunctionModel(lambda _: turn), dialect="hermes").run_sync("x")


def test_registering_what_is_no_dialect_names_the_fix() -> None:
    class Nameless(Dialect):
        openers = Tagged.openers

        def render_tools(self, tools: ToolIndex) -> str:
            return ""

        def render_calls(self, calls: Sequence[ToolCall]) -> str:
            return ""

    with pytest.raises(UserError, match=r"has no name: set `name = \"...\"` on its class"):
        register_dialect(Nameless())
    with pytest.raises(UserError, match=r"not the class Tagged: write Tagged\(\)"):
        register_dialect(Tagged)  # pyright: ignore[reportArgumentType]
    with pytest.raises(UserError, match="takes a Dialect"):
        register_dialect("hermes")  # pyright: ignore[reportArgumentType]
    with pytest.raises(UserError, match="'hermes' is already registered; pass replace=True"):
        register_dialect(type("Clash", (Tagged,), {"name": "hermes"})())
    assert get_dialect("hermes").name == "hermes"  # the built-in was not replaced


class _Raising:
    """A plugin's body format with a bug: it raises on what it reads."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        raise RuntimeError("plugin body bug")


class _HookRaising(RegionParser):
    openers = (Opener("<c>", ends=("</c>",), body=JsonCalls()),)

    def after_text(self, text: str) -> None:
        if "b" in text:  # whatever the split, a piece of "a boom" holds it
            raise RuntimeError("plugin hook bug")
        super().after_text(text)


class _ReadRaising(NativeParser):
    @staticmethod
    def read(event: Mapping[str, Any]) -> list[Any]:
        raise RuntimeError("plugin native bug")


def _plugin(name: str, **declared: Any) -> Dialect:
    kind = type(name, (Tagged,), {"name": f"test_{name}", **declared})
    return register_dialect(kind(), replace=True)


@pytest.mark.parametrize(
    ("dialect", "output"),
    [
        (
            lambda: _plugin("walk_body_bug", openers=(Opener("<c>", ends=("</c>",), body=_Raising()),)),
            "a <c>x</c>",
        ),
        (lambda: _plugin("walk_hook_bug", openers=(), parser=_HookRaising), "a boom"),
    ],
    ids=["a body format", "a parser hook"],
)
def test_a_plugin_parser_that_raises_is_told_to_the_model_and_the_run_goes_on(
    dialect: Callable[[], Dialect], output: str
) -> None:
    name = dialect().name
    bug = parse(output, name).errors
    assert [e.message for e in bug] == [
        f"internal parser error (RuntimeError: plugin {'body' if 'body' in name else 'hook'} bug); the rest of the "
        "output was ignored"
    ]
    result = Agent(ScriptedModel([output, "Plain answer."], chunk_size=2), dialect=name).run_sync("x")
    assert (result.output, result.reason) == ("Plain answer.", "no_calls")
    assert "internal parser error" in [m.content for m in result.messages if m.kind == "user"][1]


def test_a_native_plugin_whose_reading_raises_is_told_to_the_model() -> None:
    name = _plugin("walk_native_bug", openers=(), parser=_ReadRaising).name
    turns = iter([[{"say": "hi"}], [TextChunk("Plain answer.")]])

    class Provider(Model):
        native_dialect = name

        async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
            for event in next(turns):
                yield event

    result = Agent(Provider(), dialect=name).run_sync("x")
    assert (result.output, result.reason) == ("Plain answer.", "no_calls")
    assert "plugin native bug" in [m.content for m in result.messages if m.kind == "user"][1]


@pytest.mark.parametrize(
    ("native", "event", "fix"),
    [
        (None, "raw text", r"not a str: a model streams its text as TextChunk\(text\)"),
        (None, 42, "not a int"),
        ("openai", "raw text", r"not a str: a model streams its text as TextChunk\(text\)"),
        ("openai", 42, r"not 42 \(int\): Model.stream yields tether.models events"),
    ],
    ids=["text dialect, a str", "text dialect, an int", "native, a str", "native, an int"],
)
def test_a_model_of_ones_own_yielding_no_model_event_is_told_what_to_yield(
    native: str | None, event: object, fix: str
) -> None:
    class Own(Model):
        native_dialect = native

        async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
            yield event

    with pytest.raises(UserError, match=fix):
        Agent(Own(), dialect=native or "hermes").run_sync("x")


def test_a_dialect_whose_methods_are_still_stubs_says_which_one_when_used() -> None:
    # docs/dialects.md writes `def render_calls(self, calls): ...` for brevity: a copy run as it is returns None
    class Stub(Dialect):
        name: ClassVar[str] = "test_walk_stub"
        openers = Tagged.openers

        def render_tools(self, tools: ToolIndex) -> Any: ...

        def render_calls(self, calls: Sequence[ToolCall]) -> Any: ...

    register_dialect(Stub(), replace=True)
    with pytest.raises(UserError, match=r"test_walk_stub dialect's render_tools\(\) returned None"):
        Agent(ScriptedModel(["x"]), [book], dialect="test_walk_stub").run_sync("x")
    scripted = ScriptedModel([[ToolCall(id="c", name="book", arguments={"city": "Oslo"})]])
    with pytest.raises(
        UserError, match=r"test_walk_stub dialect's render_calls\(\) returned None, not the calls"
    ):
        Agent(scripted, dialect="test_walk_stub").run_sync("x")
