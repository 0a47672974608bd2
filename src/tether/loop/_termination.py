"""How a run ends: a `Termination` policy judges each model turn; `Limits` end any run whatever the policy.

A policy is a protocol, so an application can write its own: `core_tools` names the loop's core tools the
model must be offered for it (often none), and `start()` gives a fresh `Judge` for each run (an agent and its
policy serve many runs at once, so whatever one run must remember lives in its judge). After every model turn
the loop hands the judge a `TurnResult` and acts on its verdict: `End` the run, or `Continue` (with a message
to the model, or none). For example, a run that ends as soon as a `book` call succeeds::

    @dataclass(frozen=True)
    class EndAfterBooking:
        core_tools: tuple[str, ...] = ()

        def start(self) -> Judge:
            return self  # it remembers nothing between turns

        def judge(self, turn: TurnResult) -> End | Continue:
            booked = turn.succeeded("book")
            return End(booked[-1].arguments, "booked") if booked else Continue()
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from pydantic import TypeAdapter, ValidationError

from tether._literals import loads
from tether.exceptions import UserError
from tether.tools import ArgumentValidator
from tether.types import ErrorEnvelope, JsonSchema, NeedsEnvelope, OkEnvelope, ToolCall

__all__ = [
    "Continue",
    "End",
    "EndTurn",
    "FinalResponse",
    "Judge",
    "NoCalls",
    "Termination",
    "TurnResult",
    "Verdict",
    "termination_for",
]


@dataclass(frozen=True, slots=True, init=False)
class TurnResult:
    """One model turn as a termination policy sees it: what the model wrote and what its calls returned."""

    content: str
    """The model's text (without its calls and reasoning)."""
    calls: Sequence[ToolCall] = ()
    envelopes: Sequence[OkEnvelope | NeedsEnvelope | ErrorEnvelope] = ()
    """One per call, in call order."""
    unreadable: Sequence[str] = ()
    """Problems with output that looked like calls but could not be read as any (the model is told)."""

    def __init__(
        self,
        content: str,
        calls: Sequence[ToolCall] = (),
        envelopes: Sequence[OkEnvelope | NeedsEnvelope | ErrorEnvelope] = (),
        unreadable: Sequence[str] = (),
    ):
        # The generated `__init__` of a frozen dataclass sets each field through `object.__setattr__` by name
        # (~0.3 µs more an object, one a model turn): the slots' own setters do the same, faster
        # (`tests/loop/test_termination.py` pins that it makes what the generated one made).
        _set_content(self, content)
        _set_calls(self, calls)
        _set_envelopes(self, envelopes)
        _set_unreadable(self, unreadable)

    def succeeded(self, name: str) -> list[ToolCall]:
        """The turn's calls to the tool `name` that returned an ok envelope, in call order."""
        return [
            c
            for c, e in zip(self.calls, self.envelopes, strict=True)
            if c.name == name and isinstance(e, OkEnvelope)
        ]


@dataclass(frozen=True, slots=True, init=False)
class End:
    """The run ends with `output`; `reason` becomes `RunResult.reason` and the `on_chain_end` event's."""

    output: Any
    reason: str
    problem: str | None = None
    """Why the run failed, if it did: an `error` event `{error: REASON, message: problem}` comes first."""
    reply: bool = False
    """`output` is the model's reply to the user: with a responder, the responder writes it instead."""

    def __init__(self, output: Any, reason: str, problem: str | None = None, reply: bool = False):
        # the slots' setters, as `TurnResult`'s (one `End` a run)
        _set_output(self, output)
        _set_reason(self, reason)
        _set_problem(self, problem)
        _set_reply(self, reply)


_set_content = TurnResult.__dict__["content"].__set__
_set_calls = TurnResult.__dict__["calls"].__set__
_set_envelopes = TurnResult.__dict__["envelopes"].__set__
_set_unreadable = TurnResult.__dict__["unreadable"].__set__
_set_output = End.__dict__["output"].__set__
_set_reason = End.__dict__["reason"].__set__
_set_problem = End.__dict__["problem"].__set__
_set_reply = End.__dict__["reply"].__set__


@dataclass(frozen=True, slots=True)
class Continue:
    """The run goes on with another model turn, after `message` (if any) is added as the user's."""

    message: str | None = None


Verdict = End | Continue
_GO_ON = Continue()


class Judge(Protocol):
    """One run's judge: it sees each model turn in order and says whether the run ends."""

    def judge(self, turn: TurnResult) -> Verdict:
        """The verdict on the turn just taken (its calls have all been answered)."""
        ...


class Termination(Protocol):
    """A way for runs to end; `NoCalls`, `EndTurn` and `FinalResponse` are tether's, and any object with
    these two members is one too."""

    @property
    def core_tools(self) -> tuple[str, ...]:
        """The loop's core tools (`send_chat`, `say`, `open_url`, `end_turn`, `finalResponse`) the model must
        be offered for this policy."""
        ...

    def start(self) -> Judge:
        """A judge for a new run, remembering nothing of any other run."""
        ...


@dataclass(frozen=True, slots=True)
class NoCalls:
    """The run ends when a model turn makes no tool call (the native default)."""

    core_tools: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def start(self) -> Judge:
        return self

    def judge(self, turn: TurnResult) -> Verdict:
        if not turn.calls and not turn.unreadable:
            return End(turn.content, "no_calls", None, True)  # (positional: the run's last turn, every run)
        return _GO_ON


@dataclass(frozen=True, slots=True)
class EndTurn:
    """The run ends only when the model calls `end_turn` (seed 000); `send_chat` and `say` never end it.

    A turn with no call at all is answered with a reminder to call `end_turn`.
    """

    reminder: str = "Continue, or call end_turn to hand control back to the user."
    core_tools: tuple[str, ...] = field(
        default=("send_chat", "say", "open_url", "end_turn"), init=False, repr=False, compare=False
    )

    def start(self) -> Judge:
        return self

    def judge(self, turn: TurnResult) -> Verdict:
        if turn.succeeded("end_turn"):
            chats = turn.succeeded("send_chat")
            output = chats[-1].arguments.get("content") if chats else turn.content
            return End(output, "end_turn", reply=True)
        return Continue(None if turn.calls else self.reminder)


@dataclass(frozen=True, slots=True)
class FinalResponse:
    """The run ends with JSON in a required format once the model calls `finalResponse()` (seed 003).

    The format requirements go back under the same system prompt; the model's answer is validated against
    `schema` and re-asked up to `attempts` times. A turn with no call at all is answered with `reminder`,
    as the seed's loop sends the model back to work until it calls `finalResponse()`.
    """

    schema: JsonSchema | type[Any] | None = None
    """The format of the final answer: a JSON Schema (the output is the JSON value), or a type pydantic can
    validate, e.g. a `BaseModel` subclass or `list[int]` (the output is a validated instance); None accepts
    any JSON value."""
    instructions: str = "Respond now with only the final answer as JSON, with no tool calls and no prose."
    attempts: int = 3
    reminder: str = (
        "Call finalResponse() when you have everything you need: you will then be told the exact format of "
        "the final answer. Do not answer before calling it."
    )
    core_tools: tuple[str, ...] = field(default=("finalResponse",), init=False, repr=False, compare=False)

    def start(self) -> Judge:
        return _FinalAnswer(self)

    def json_schema(self) -> JsonSchema | None:
        """The format as a JSON Schema, as the model is shown it."""
        if self.schema is None or isinstance(self.schema, dict):
            return self.schema
        return TypeAdapter(self.schema).json_schema()

    def request(self) -> str:
        """What the model is asked once it calls `finalResponse()`: the instructions and the format."""
        schema = self.json_schema()
        if schema is None:
            return self.instructions
        return (
            f"{self.instructions}\nIt must match this JSON Schema:\n{json.dumps(schema, ensure_ascii=False)}"
        )

    def read(self, text: str) -> tuple[Any, str | None]:
        """The model's final answer, read as JSON (a code fence around it is fine) and checked against the
        format, or the problem to send back."""
        body = text.strip()
        if body.startswith("```"):
            body = body.split("\n", 1)[-1].rsplit("```", 1)[0]
        parsed = loads(body)
        if not parsed.ok:
            return None, f"Your final answer is not valid JSON ({parsed.error})."
        value, problems = self.check(parsed.value)
        if problems is not None:
            return None, f"Your final answer does not match the required format: {problems}."
        return value, None

    def check(self, value: Any) -> tuple[Any, str | None]:
        """The final answer (validated, or an instance of the type), or the problem to send back."""
        if self.schema is None:
            return value, None
        if isinstance(self.schema, dict):
            checked = ArgumentValidator(self.schema, tool_name="the final answer").validate(value)
            if checked.problems:
                return None, "; ".join(str(p) for p in checked.problems)
            return checked.arguments, None
        try:
            return TypeAdapter(self.schema).validate_python(value), None
        except ValidationError as e:
            return None, "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'the answer'}: {error['msg']}"
                for error in e.errors(include_url=False)
            )


class _FinalAnswer:
    """One run under `FinalResponse`: back to work until `finalResponse()` is called, then the answer is read
    and asked again, up to `attempts` times, until it matches the format."""

    def __init__(self, policy: FinalResponse):
        self.policy = policy
        self.asked = False
        """`finalResponse()` was called: the next turn is the final answer."""
        self.attempts = 0

    def judge(self, turn: TurnResult) -> Verdict:
        policy = self.policy
        if self.asked:
            value, problem = policy.read(turn.content)
            if problem is None:
                return End(value, "final_response")
            self.attempts += 1
            if self.attempts >= policy.attempts:
                return End(None, "invalid_final_response", problem=problem)
            return Continue(f"{problem}\n\n{policy.request()}")
        if turn.succeeded("finalResponse"):
            self.asked = True
            return Continue(policy.request())
        return Continue(None if turn.calls else policy.reminder)  # the seed's loop: back to work


def termination_for(termination: Termination | None, output_type: Any) -> Termination:
    """The policy an agent runs under: `output_type` means `FinalResponse` with it as the format.

    Raises:
        UserError: `termination` is no `Termination` (a class rather than an instance, or an object without
            `core_tools` and `start()`), or `output_type` is given with a policy other than `FinalResponse`.
    """
    if termination is not None:
        _check_policy(termination)
    if output_type is None:
        return termination or NoCalls()
    if termination is None:
        return FinalResponse(schema=output_type)
    if isinstance(termination, FinalResponse) and termination.schema is None:
        return dataclasses.replace(termination, schema=output_type)
    raise UserError(
        "Agent(output_type=...) ends the run with FinalResponse(schema=output_type): leave termination out, "
        f"or give FinalResponse(...) without a schema (got termination={termination!r})."
    )


def _check_policy(termination: object) -> None:
    """Refuse, at `Agent(...)`, what would fail obscurely in the middle of a run."""
    if isinstance(termination, type):
        name = termination.__name__
        raise UserError(
            f"Agent(termination=...) takes a policy, not the class {name}: write termination={name}()."
        )
    core: object = getattr(termination, "core_tools", None)
    names = cast("Sequence[object]", core) if isinstance(core, tuple | list) else None
    if (
        names is None
        or not callable(getattr(termination, "start", None))
        or not all(type(n) is str for n in names)
    ):
        raise UserError(
            "Agent(termination=...) takes a Termination: an object with `core_tools` (a tuple of the loop's core "
            "tools it needs, often ()) and `start()` returning a Judge, whose `judge(turn)` returns End(output, "
            f"reason) or Continue(message) (see tether.loop.Termination); got {termination!r}."
        )
