"""Each guard's envelope, through the real executor."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from tether.execution import (
    Allow,
    Attempt,
    Decision,
    Executor,
    Policy,
    Principal,
    Run,
    idempotency_key,
    refusal,
)
from tether.execution._guards import is_content_free
from tether.tools import Toolset, tool
from tether.types import (
    ErrorEnvelope,
    ErrorInfo,
    OkEnvelope,
    Provenance,
    RateLimit,
    Repair,
    ToolCall,
    ToolSpec,
)

pytestmark = pytest.mark.anyio

WHY_SUGGESTION = (
    "Add `why`: one sentence saying what you are trying to accomplish with this call, "
    'e.g. "Find where the parser handles nested expressions to fix the reported bug".'
)


@tool(side_effects="none")
def get_weather(city: str, days: int = 1) -> dict[str, object]:
    """Weather for a city."""
    return {"city": city, "days": days}


@tool(requires_why=True, name="fs.read", side_effects="none")
def fs_read(path: str) -> str:
    return f"contents of {path}"


@tool(scopes=("calendar.events.propose",))
def schedule_meeting(counterpart: str) -> str:
    return f"proposed to {counterpart}"


@tool(side_effects="none", rate_limit=RateLimit(calls=2, per_seconds=10))
def search(query: str) -> list[str]:
    return [query]


@tool
def set_volume(level: int) -> int:
    return level


@tool
def send_email(to: str, subject: str) -> str:
    return f"sent to {to}"


TOOLS = Toolset(get_weather, fs_read, schedule_meeting, search, send_email, set_volume)


def call(name: str, call_id: str = "c1", **arguments: object) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=dict(arguments))


def error(
    code: str, message: str, recoverable: bool, suggestion: str, details: dict[str, Any] | None = None
) -> ErrorEnvelope:
    info = ErrorInfo(
        code=code, message=message, recoverable=recoverable, suggestion=suggestion, details=details
    )
    return ErrorEnvelope(error=info)


async def test_a_valid_call_runs_its_tool() -> None:
    envelope = await Executor(TOOLS).execute(call("get_weather", city="Paris"))
    assert envelope == OkEnvelope(data={"city": "Paris", "days": 1})


async def test_an_unknown_tool_is_refused_with_the_closest_names() -> None:
    envelope = await Executor(TOOLS).execute(call("get_wether", city="Paris"))
    assert envelope == error(
        "UNKNOWN_TOOL",
        "There is no tool named 'get_wether'.",
        True,
        "Call one of the available tools instead; the closest names are `get_weather`.",
        {"closest": ["get_weather"]},
    )


async def test_invalid_arguments_list_every_problem_with_its_path() -> None:
    envelope = await Executor(TOOLS).execute(call("get_weather", days="soon"))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "INVALID_ARGS"
    assert envelope.error.recoverable
    assert envelope.error.details == {
        "problems": [
            {"path": "$.city", "message": "missing required argument"},
            {"path": "$.days", "message": 'must be an integer; got string "soon"'},
        ]
    }


async def test_an_unknown_argument_is_refused_naming_the_closest_one_instead_of_dropped() -> None:
    envelope = await Executor(TOOLS).execute(call("get_weather", city="Oslo", day=5))
    assert envelope == error(
        "INVALID_ARGS",
        "1 problem with the arguments of get_weather: $.day: unknown argument; did you mean `days`?",
        True,
        "Fix every listed argument and call the tool again.",
        {"problems": [{"path": "$.day", "message": "unknown argument; did you mean `days`?"}]},
    )


@tool(side_effects="none")
def annotate(text: str, payload: object = None) -> str:
    return text


def nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"inner": value}
    return value


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        (
            {"text": "x", "payload": nested(40)},
            "$.payload" + ".inner" * 31 + ": nests more than 32 levels deep",
        ),
        (
            {"text": "x", "payload": nested(3000)},
            "$.payload" + ".inner" * 31 + ": nests more than 32 levels deep",
        ),
        ({"text": "x", "payload": {"a": {1: "one"}}}, "$.payload.a: has a key that is not a string: 1"),
        ({"text": "x", "payload": [1.5, float("nan")]}, "$.payload[1]: must be a finite number; got nan"),
        ({"text": "x", "payload": {"t": float("-inf")}}, "$.payload.t: must be a finite number; got -inf"),
    ],
    ids=["deep", "very deep", "non-string key", "nan", "infinity"],
)
async def test_arguments_json_cannot_hold_are_the_models_to_fix(
    arguments: dict[str, Any], problem: str
) -> None:
    executor = Executor(Toolset(annotate))
    envelope = await executor.execute(ToolCall.model_construct(id="c1", name="annotate", arguments=arguments))
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.message) == (
        "INVALID_ARGS",
        f"1 problem with the arguments of annotate: {problem}",
    )
    assert [e.kind for e in executor.journal.entries()] == ["refusal"]


@pytest.mark.parametrize(
    ("why", "problem"),
    [
        (None, "has no `why`"),
        ("   ", "has an empty `why`"),
        ("read the file", "has a `why` that states no intent ('read the file')"),
        ("because I need it", "has a `why` that states no intent ('because I need it')"),
    ],
)
async def test_a_missing_empty_or_content_free_why_is_refused(why: str | None, problem: str) -> None:
    arguments = {"path": "src/parser.ts"} | ({"why": why} if why is not None else {})
    envelope = await Executor(TOOLS).execute(ToolCall(id="c1", name="fs.read", arguments=arguments))
    assert envelope == error(
        "MISSING_WHY", f"The call to fs.read {problem}; this tool requires one.", True, WHY_SUGGESTION
    )


async def test_a_why_stating_intent_is_accepted_in_the_field_or_the_arguments() -> None:
    executor = Executor(TOOLS)
    why = "Check if recursive descent handles nested expressions"
    as_field = ToolCall(id="c1", name="fs.read", arguments={"path": "a.ts"}, why=why)
    as_argument = ToolCall(id="c2", name="fs.read", arguments={"path": "a.ts", "why": why})
    assert await executor.execute(as_field) == OkEnvelope(data="contents of a.ts")
    assert await executor.execute(as_argument) == OkEnvelope(data="contents of a.ts")


def test_content_free_means_nothing_beyond_filler_and_the_tool_name() -> None:
    assert is_content_free("read the file", "fs.read")
    assert is_content_free("get weather", "get_weather")
    assert not is_content_free("Run tests to verify the patch works", "terminal.run")
    assert not is_content_free("Find where YAML Jazz is defined", "search.lexical")


async def test_an_anonymous_call_to_a_scoped_tool_is_unauthorized() -> None:
    envelope = await Executor(TOOLS).execute(call("schedule_meeting", counterpart="Aviad"))
    assert envelope == error(
        "UNAUTHORIZED",
        "schedule_meeting can only be called on behalf of a signed-in user.",
        False,
        "Tell the user they need to sign in (or connect their account) to do this.",
    )


async def test_a_policy_can_require_a_principal_for_every_tool() -> None:
    executor = Executor(TOOLS, policy=Policy(require_principal=True))
    envelope = await executor.execute(call("get_weather", city="Paris"))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "UNAUTHORIZED"


async def test_a_principal_without_the_scopes_is_refused_naming_them() -> None:
    run = Run(principal=Principal("u1", frozenset({"calendar.availability.read"})))
    envelope = await Executor(TOOLS).execute(call("schedule_meeting", counterpart="Aviad"), run)
    assert envelope == error(
        "SCOPES_MISSING",
        "schedule_meeting needs permission the user has not granted: calendar.events.propose.",
        False,
        "Do not retry. Tell the user which permission is missing and ask them to grant it, "
        "or do what they asked with another tool.",
        {"missing_scopes": ["calendar.events.propose"]},
    )


async def test_a_principal_with_the_scopes_may_call() -> None:
    run = Run(principal=Principal("u1", frozenset({"calendar.events.propose"})))
    envelope = await Executor(TOOLS).execute(call("schedule_meeting", counterpart="Aviad"), run)
    assert envelope == OkEnvelope(data="proposed to Aviad")


class ConnectionGuard:
    """A domain guard: meetings only with active connections (seed 002)."""

    async def check(self, attempt: Attempt) -> Decision:
        if attempt.call.arguments.get("counterpart") == "Mallory":
            return refusal(
                "CONNECTION_INACTIVE",
                "Your connection with Mallory is not active.",
                recoverable=False,
                suggestion="Ask the user to reconnect with Mallory first.",
            )
        return Allow()


async def test_domain_guards_add_their_own_codes() -> None:
    executor = Executor(TOOLS, guards=[ConnectionGuard()])
    run = Run(principal=Principal("u1", frozenset({"calendar.events.propose"})))
    envelope = await executor.execute(call("schedule_meeting", counterpart="Mallory"), run)
    assert envelope == error(
        "CONNECTION_INACTIVE",
        "Your connection with Mallory is not active.",
        False,
        "Ask the user to reconnect with Mallory first.",
    )


async def test_calls_over_the_rate_limit_are_told_when_to_retry() -> None:
    now = [100.0]
    executor = Executor(TOOLS, clock=lambda: now[0])
    run = Run(principal=Principal("u1"))
    first = [await executor.execute(call("search", f"c{i}", query="x"), run) for i in range(3)]
    assert first[:2] == [OkEnvelope(data=["x"]), OkEnvelope(data=["x"])]
    assert first[2] == error(
        "RATE_LIMITED",
        "search allows 2 calls per 10 s; try again in 5 s.",
        True,
        "Wait 5 s before calling search again, or do something else.",
        {"retry_after_s": 5.0},
    )
    other_user = await executor.execute(call("search", "c9", query="x"), Run(principal=Principal("u2")))
    assert other_user == OkEnvelope(data=["x"])
    now[0] += 5
    assert await executor.execute(call("search", "c4", query="x"), run) == OkEnvelope(data=["x"])


async def test_a_run_over_its_call_quota_is_refused() -> None:
    executor = Executor(TOOLS, policy=Policy(max_calls_per_run=2))
    run = Run()
    results = [await executor.execute(call("get_weather", f"c{i}", city="Paris"), run) for i in range(3)]
    assert results[2] == error(
        "QUOTA_EXCEEDED",
        "Quota exceeded: this run may make at most 2 tool calls.",
        False,
        "Stop calling tools; answer the user with what you have, and say what is left undone.",
    )


async def test_a_run_over_its_output_quota_is_refused() -> None:
    executor = Executor(TOOLS, policy=Policy(max_output_bytes_per_run=20))
    run = Run()
    assert isinstance(await executor.execute(call("get_weather", "c1", city="Paris"), run), OkEnvelope)
    assert run.output_bytes == len('{"city":"Paris","days":1}')
    refused = await executor.execute(call("get_weather", "c2", city="Paris"), run)
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.message == "Quota exceeded: this run may receive at most 20 bytes of tool output."


async def test_a_run_over_its_wall_time_is_refused() -> None:
    executor = Executor(TOOLS, policy=Policy(max_wall_time_s_per_run=5))
    run = Run(started_at=0.0)  # monotonic zero: long ago
    refused = await executor.execute(call("get_weather", city="Paris"), run)
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.message == "Quota exceeded: this run may start tool calls for at most 5 s."


def repaired(name: str, **arguments: object) -> ToolCall:
    repair = Repair(kind="trailing_comma", message="removed a trailing comma")
    return ToolCall(
        id="c1",
        name=name,
        arguments=dict(arguments),
        provenance=Provenance(dialect="hermes", repairs=(repair,)),
    )


async def test_a_repaired_call_to_a_mutating_tool_is_refused() -> None:
    envelope = await Executor(TOOLS).execute(repaired("send_email", to="a@b.c", subject="hi"))
    assert envelope == error(
        "INVALID_ARGS",
        "The call to send_email was malformed and had to be repaired (removed a trailing comma); "
        "a repaired call is not run because this tool changes things.",
        True,
        "Send the call again, exactly well-formed, with the arguments you intend.",
        {"repairs": [{"kind": "trailing_comma", "message": "removed a trailing comma", "path": None}]},
    )


async def test_a_repaired_call_to_a_read_only_tool_runs() -> None:
    envelope = await Executor(TOOLS).execute(repaired("get_weather", city="Paris"))
    assert envelope == OkEnvelope(data={"city": "Paris", "days": 1})


async def test_safe_coercions_are_tolerated_by_default_and_refusable_by_policy() -> None:
    coerced = call("set_volume", level="5")
    assert await Executor(TOOLS).execute(coerced) == OkEnvelope(data=5)
    strict = Executor(TOOLS, policy=Policy(tolerated_repairs=frozenset()))
    refused = await strict.execute(coerced)
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.code == "INVALID_ARGS"


async def test_the_repaired_call_policy_can_allow_every_repair() -> None:
    executor = Executor(TOOLS, policy=Policy(repaired_calls="allow"))
    assert await executor.execute(repaired("send_email", to="a@b.c", subject="hi")) == OkEnvelope(
        data="sent to a@b.c"
    )


async def test_guards_run_in_the_documented_order() -> None:
    names = [type(g).__name__ for g in Executor(TOOLS, guards=[ConnectionGuard()]).guards]
    assert names == [
        "UnknownToolGuard",
        "SchemaGuard",
        "WhyGuard",
        "PrincipalGuard",
        "ConnectionGuard",
        "QuotaGuard",
        "RepairedCallGuard",
        "RateLimitGuard",
        "IdempotencyGuard",
    ]


async def test_the_first_guard_that_refuses_answers() -> None:
    # Both invalid and unauthorized: schema validation comes first.
    envelope = await Executor(TOOLS).execute(call("schedule_meeting"))
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "INVALID_ARGS"


def test_idempotency_keys_stay_the_canonical_json_hash_journals_already_hold() -> None:
    # keys are persisted: a repeat after an upgrade must find the same key
    arguments = {"b": [1, {"z": 1, "a": float("nan")}], "a": "é", "t": ToolSpec}  # a value JSON lacks: repr
    call = ToolCall(id="c1", name="t", arguments=arguments)
    for spec, basis in (
        (ToolSpec(name="t"), ["call", "s1", "c1", "t", arguments]),
        (ToolSpec(name="t", idempotency_fields=("a",)), ["fields", "t", "p1", {"a": "é"}]),
    ):
        text = json.dumps(basis, sort_keys=True, separators=(",", ":"), default=repr)
        expected = hashlib.sha256(text.encode()).hexdigest()[:32]
        assert idempotency_key(call, spec, principal="p1", scope="s1") == expected


@pytest.mark.parametrize(
    ("scope", "call_id", "name"),
    [("s1", "c1", "t"), ("sé", 'c"\\1', "t\u2028"), ("\x00\x1f", "\ud800", "é" * 300), ("", "", "x")],
)
def test_a_call_keys_head_is_written_as_the_canonical_json_of_the_whole_basis(
    scope: str, call_id: str, name: str
) -> None:
    # the key writes the basis' list of strings itself and the arguments through the encoder: the same text
    arguments = {"b": 1.5, "a": [True, None, "é"], "c": {"y": 1, "x": 2}}
    call = ToolCall.model_construct(id=call_id, name=name, arguments=arguments)
    basis = ["call", scope, call_id, name, arguments]
    text = json.dumps(basis, sort_keys=True, separators=(",", ":"), default=repr)
    expected = hashlib.sha256(text.encode()).hexdigest()[:32]
    spec = ToolSpec.model_construct(name=name)  # any text, as the spec of a tool loaded from elsewhere
    assert idempotency_key(call, spec, principal=None, scope=scope) == expected
