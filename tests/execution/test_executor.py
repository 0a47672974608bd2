"""The executor: ordering, concurrency, idempotency, journaling, redaction and records."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from pathlib import Path

import anyio
import pytest

from tether.exceptions import NeedsInput, ToolError
from tether.execution import CallReport, Executor, Policy, Principal, Run, SessionLog
from tether.store import JournalEntry, MemoryJournal, SqlJournal
from tether.store.internal import OutcomeUnknown
from tether.tools import REDACTED, Toolset, tool
from tether.types import ErrorEnvelope, ErrorInfo, NeedsEnvelope, OkEnvelope, ToolCall, ToolCallRecord

pytestmark = pytest.mark.anyio

started: list[str] = []


@tool(side_effects="none")
async def step(label: str, seconds: float = 0.0) -> str:
    started.append(label)
    await anyio.sleep(seconds)
    return label


@tool(side_effects="none", sequential=True)
async def barrier(label: str) -> str:
    started.append(f"barrier:{label}")
    return label


@tool(side_effects="none", priority=5)
async def urgent(label: str) -> str:
    started.append(f"urgent:{label}")
    return label


charges: list[int] = []


@tool(idempotency_fields=("order_id",))
async def charge(order_id: str, cents: int) -> dict[str, object]:
    charges.append(cents)
    await anyio.sleep(0.05)
    return {"order_id": order_id, "charged": cents}


@tool
async def book(room: str) -> str:
    await anyio.sleep(0.05)
    return f"booked {room}"


@tool(side_effects="none")
def login(user: str, password: str) -> dict[str, str]:
    return {"user": user, "token": "t0ps3cret"}


TOOLS = Toolset(step, barrier, urgent, charge, book)


@pytest.fixture(autouse=True)
def reset() -> None:
    started.clear()
    charges.clear()


def call(name: str, call_id: str, priority: int | None = None, **arguments: object) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=dict(arguments), priority=priority)


async def test_results_come_back_in_call_order_and_higher_priority_starts_first() -> None:
    calls = [
        call("step", "a", label="a"),
        call("step", "b", priority=9, label="b"),
        call("urgent", "c", label="c"),
        call("step", "d", label="d"),
    ]
    results = await Executor(TOOLS, policy=Policy(max_concurrency=1)).execute_all(calls)
    assert results == [OkEnvelope(data=x) for x in "abcd"]
    assert started == ["b", "urgent:c", "a", "d"]


async def test_calls_of_equal_priority_start_in_the_models_order_and_an_empty_batch_answers_nothing() -> None:
    """Equal priorities (none, or the same) keep the model's order (`execute_all` skips its sort then)."""
    for priority in (None, 3):
        started.clear()
        calls = [call("step", f"c{i}", priority=priority, label=str(i)) for i in (3, 1, 2, 0)]
        results = await Executor(TOOLS, policy=Policy(max_concurrency=1)).execute_all(calls)
        assert results == [OkEnvelope(data=x) for x in "3120"]
        assert started == ["3", "1", "2", "0"]
    assert await Executor(TOOLS).execute_all([]) == []


async def test_independent_calls_run_concurrently_up_to_the_cap() -> None:
    calls = [call("step", f"c{i}", label=str(i), seconds=0.1) for i in range(8)]
    began = time.perf_counter()
    await Executor(TOOLS, policy=Policy(max_concurrency=4)).execute_all(calls)
    elapsed = time.perf_counter() - began
    assert 0.2 <= elapsed < 0.35


async def test_a_sequential_tool_is_a_barrier() -> None:
    calls = [
        call("step", "a", label="a", seconds=0.05),
        call("step", "b", label="b"),
        call("barrier", "x", label="x"),
        call("step", "c", label="c"),
    ]
    results = await Executor(TOOLS).execute_all(calls)
    assert results == [OkEnvelope(data=x) for x in ("a", "b", "x", "c")]
    assert started.index("barrier:x") == 2
    assert started[:2] in (["a", "b"], ["b", "a"])


@pytest.mark.parametrize("size", [1, 4])
async def test_on_result_hears_of_each_call_as_it_is_answered(size: int) -> None:
    heard: list[tuple[int, str]] = []

    async def on_result(index: int, envelope: object) -> None:
        assert isinstance(envelope, OkEnvelope)
        heard.append((index, str(envelope.data)))

    seconds = [0.15, 0.0, 0.1, 0.05][:size]
    calls = [call("step", f"c{i}", label=str(i), seconds=s) for i, s in enumerate(seconds)]
    results = await Executor(TOOLS).execute_all(calls, on_result=on_result)
    assert results == [OkEnvelope(data=str(i)) for i in range(size)]  # still in call order
    assert heard == ([(0, "0")] if size == 1 else [(1, "1"), (3, "3"), (2, "2"), (0, "0")])  # as they finish


@pytest.mark.parametrize("size", [1, 4])
async def test_a_plain_on_result_is_called_as_each_call_is_answered_and_what_it_returns_is_awaited(
    size: int,
) -> None:
    """`on_result` may be a plain function: None means nothing to wait for; an awaitable it returns is awaited
    in the call's task, before the batch returns (the loop's way: no coroutine a call)."""
    heard: list[tuple[int, str]] = []
    awaited: list[int] = []

    async def later(index: int) -> None:
        await anyio.lowlevel.checkpoint()
        awaited.append(index)

    def on_result(index: int, envelope: object) -> Awaitable[None] | None:
        assert isinstance(envelope, OkEnvelope)
        heard.append((index, str(envelope.data)))
        return later(index) if index % 2 == 0 else None

    seconds = [0.15, 0.0, 0.1, 0.05][:size]
    calls = [call("step", f"c{i}", label=str(i), seconds=s) for i, s in enumerate(seconds)]
    results = await Executor(TOOLS).execute_all(calls, on_result=on_result)
    assert results == [OkEnvelope(data=str(i)) for i in range(size)]
    assert heard == ([(0, "0")] if size == 1 else [(1, "1"), (3, "3"), (2, "2"), (0, "0")])
    assert awaited == ([0] if size == 1 else [2, 0])  # each before the batch returned


async def test_a_repeated_call_returns_the_recorded_envelope_without_running_again() -> None:
    executor = Executor(TOOLS)
    run = Run(session_id="s1")
    first = await executor.execute(call("book", "c1", room="Blue"), run)
    again = await executor.execute(call("book", "c1", room="Blue"), Run(session_id="s1"))
    assert first == again == OkEnvelope(data="booked Blue")
    assert [e.kind for e in executor.journal.entries()] == ["intent", "result"]


async def test_the_same_call_id_in_another_session_is_another_call() -> None:
    executor = Executor(TOOLS)
    await executor.execute(call("book", "c1", room="Blue"), Run(session_id="s1"))
    await executor.execute(call("book", "c1", room="Blue"), Run(session_id="s2"))
    assert [e.kind for e in executor.journal.entries()] == ["intent", "result", "intent", "result"]


async def test_declared_idempotency_fields_make_the_key() -> None:
    executor = Executor(TOOLS)
    run = Run(principal=Principal("u1"))
    first = await executor.execute(call("charge", "c1", order_id="o-1", cents=500), run)
    second = await executor.execute(call("charge", "c2", order_id="o-1", cents=500), run)
    assert first == second == OkEnvelope(data={"order_id": "o-1", "charged": 500})
    assert charges == [500]


async def test_a_concurrent_duplicate_gets_conflict() -> None:
    executor = Executor(TOOLS)
    results = await executor.execute_all(
        [call("charge", "c1", order_id="o-1", cents=500), call("charge", "c2", order_id="o-1", cents=500)],
        Run(principal=Principal("u1")),
    )
    assert results == [
        OkEnvelope(data={"order_id": "o-1", "charged": 500}),
        ErrorEnvelope(
            error=ErrorInfo(
                code="CONFLICT",
                message="Duplicate call to charge: the same call is already running.",
                recoverable=True,
                suggestion="Do not send the same call twice; wait for the first one's result.",
                details={"duplicate": True},
            )
        ),
    ]
    assert charges == [500]


async def test_idempotency_can_be_turned_off() -> None:
    executor = Executor(TOOLS, policy=Policy(idempotency=False))
    run = Run()
    for call_id in ("c1", "c2"):
        await executor.execute(call("charge", call_id, order_id="o-1", cents=500), run)
    assert charges == [500, 500]


async def test_the_journal_records_intent_then_result_with_why_duration_and_repairs() -> None:
    executor = Executor(TOOLS)
    run = Run(principal=Principal("u1"), session_id="s1")
    the_call = ToolCall(
        id="c1", name="book", arguments={"room": "Blue"}, why="Reserve a room for the offsite"
    )
    await executor.execute(the_call, run)
    intent, result = executor.journal.entries()
    assert (intent.kind, intent.principal, intent.why, intent.arguments, intent.repaired) == (
        "intent",
        "u1",
        "Reserve a room for the offsite",
        {"room": "Blue"},
        False,
    )
    assert (result.kind, result.intent_id, result.outcome, result.envelope) == (
        "result",
        intent.id,
        "ok",
        {"ok": True, "data": "booked Blue"},
    )
    assert result.duration_ms is not None
    assert result.duration_ms >= 50


async def test_refusals_are_journaled_too() -> None:
    executor = Executor(TOOLS)
    await executor.execute(call("nope", "c1"))
    (entry,) = executor.journal.entries()
    assert (entry.kind, entry.tool, entry.error_code) == ("refusal", "nope", "UNKNOWN_TOOL")


async def test_secrets_are_redacted_from_the_journal_and_records_by_schema() -> None:
    spec = login.spec.model_copy(
        update={
            "input_schema": {
                "type": "object",
                "properties": {
                    "user": {"type": "string"},
                    "password": {"type": "string", "format": "password"},
                },
                "required": ["user", "password"],
            },
            "output_schema": {
                "type": "object",
                "properties": {"token": {"type": "string", "x-secret": True}},
            },
        }
    )
    executor = Executor(Toolset(login.with_spec(spec)))
    run = Run()
    envelope = await executor.execute(call("login", "c1", user="ada", password="hunter2"), run)
    assert envelope == OkEnvelope(data={"user": "ada", "token": "t0ps3cret"})
    intent, result = executor.journal.entries()
    assert intent.arguments == {"user": "ada", "password": REDACTED}
    assert result.envelope == {"ok": True, "data": {"user": "ada", "token": REDACTED}}
    assert run.records == [
        ToolCallRecord(
            toolType="function",
            toolName="login",
            input={"user": "ada", "password": REDACTED},
            output={"user": "ada", "token": REDACTED},
        )
    ]


async def test_every_answered_call_gets_a_kalygo_record_and_reaches_recorders() -> None:
    reports: list[CallReport] = []

    class Collect:
        def record(self, report: CallReport) -> None:
            reports.append(report)

    executor = Executor(TOOLS, recorders=[Collect()])
    run = Run(session_id="s1")
    await executor.execute(call("book", "c1", room="Blue"), run)
    await executor.execute(call("book", "c1", room="Blue"), run)
    await executor.execute(call("nope", "c2"), run)
    assert [r.status for r in reports] == ["ran", "replayed", "refused"]
    assert run.records[0] == ToolCallRecord(
        toolType="function", toolName="book", input={"room": "Blue"}, output="booked Blue"
    )
    assert run.records[2].toolType == "unknown"
    assert run.records[2].output["error"]["code"] == "UNKNOWN_TOOL"


async def test_a_repeated_read_only_call_runs_again_rather_than_replaying_a_stale_result() -> None:
    executor = Executor(TOOLS)
    run = Run(session_id="s1")
    for _ in range(2):
        assert await executor.execute(call("step", "c1", label="a"), run) == OkEnvelope(data="a")
    assert started == ["a", "a"]
    assert await executor.in_doubt() == []


async def test_concurrent_repeats_of_a_completed_call_all_get_its_result(tmp_path: Path) -> None:
    journal = SqlJournal(
        f"sqlite:///{tmp_path / 'journal.db'}"
    )  # its lookups wait on a thread: calls overlap
    executor = Executor(TOOLS, journal=journal)
    run = Run(principal=Principal("u1"))
    first = await executor.execute(call("charge", "c1", order_id="o-1", cents=500), run)
    repeats = [call("charge", f"c{i}", order_id="o-1", cents=500) for i in range(2, 12)]
    results = await executor.execute_all(repeats, run)
    journal.close()
    assert results == [first] * 10
    assert charges == [500]


async def test_a_call_sharing_only_its_idempotency_fields_with_a_completed_one_is_a_conflict() -> None:
    executor = Executor(TOOLS)
    run = Run(principal=Principal("u1"))
    await executor.execute(call("charge", "c1", order_id="o-1", cents=500), run)
    other = await executor.execute(call("charge", "c2", order_id="o-1", cents=900), run)
    assert other == ErrorEnvelope(
        error=ErrorInfo(
            code="CONFLICT",
            message=(
                "A charge call with the same `order_id` already completed, with other arguments "
                "(`cents` differ); it is not run again."
            ),
            recoverable=False,
            suggestion="Do not retry. The earlier call stands; to change it, tell the user, or use a new `order_id`.",
            details={"duplicate": True, "intent_id": 1, "differing": ["cents"]},
        )
    )
    assert charges == [500]


meetings: list[str] = []


@tool(idempotency_fields=("counterpart",))
def schedule(counterpart: str, day: str = "") -> str:
    if not day:
        raise NeedsInput(day="Which day suits you?")
    if day == "Sunday":
        raise ToolError("CONFLICT", "The office is closed on Sundays.")
    meetings.append(f"{counterpart} on {day}")
    return f"Meeting with {counterpart} on {day}"


async def test_only_a_success_is_replayed_so_ask_then_proceed_works_across_sessions() -> None:
    meetings.clear()
    executor = Executor(Toolset(schedule))
    asks = await executor.execute(call("schedule", "c1", counterpart="Ana"), Run(Principal("u1"), "monday"))
    refused = await executor.execute(
        call("schedule", "c2", counterpart="Ana", day="Sunday"), Run(Principal("u1"), "tuesday")
    )
    booked = await executor.execute(
        call("schedule", "c3", counterpart="Ana", day="Friday"), Run(Principal("u1"), "tuesday")
    )
    again = await executor.execute(
        call("schedule", "c4", counterpart="Ana", day="Friday"), Run(Principal("u1"), "wednesday")
    )
    assert asks == NeedsEnvelope(needs={"day": "Which day suits you?"})
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.message == "The office is closed on Sundays."
    assert booked == again == OkEnvelope(data="Meeting with Ana on Friday")
    assert meetings == ["Ana on Friday"]


@tool
async def slow_transfer(account: str) -> str:
    await anyio.sleep(5)
    return f"sent to {account}"


async def test_a_mutating_call_that_timed_out_is_not_run_again_by_a_repeat() -> None:
    executor = Executor(Toolset(slow_transfer), policy=Policy(default_timeout_s=0.05))
    run = Run(session_id="s1")
    first = await executor.execute(call("slow_transfer", "c1", account="A-1"), run)
    again = await executor.execute(call("slow_transfer", "c1", account="A-1"), run)
    assert isinstance(first, ErrorEnvelope)
    assert first.error.code == "TIMEOUT"
    assert again == first
    assert [e.kind for e in executor.journal.entries()] == ["intent", "result"]


@tool
def unlock(door: str, pin: int, code: str) -> str:
    return f"opened {door}"


SECRET_PIN = unlock.with_spec(
    unlock.spec.model_copy(
        update={
            "input_schema": {
                "type": "object",
                "properties": {
                    "door": {"type": "string"},
                    "pin": {"type": "integer", "x-secret": True},
                    "code": {"type": "string", "format": "password", "pattern": "^[0-9]+$"},
                },
                "required": ["door", "pin", "code"],
            }
        }
    )
)


async def test_a_secret_argument_reaches_no_journal_entry_record_or_log_even_when_refused(
    tmp_path: Path,
) -> None:
    log = tmp_path / "session-log.md"
    executor = Executor(
        Toolset(SECRET_PIN), recorders=[SessionLog(log)], policy=Policy(tolerated_repairs=frozenset())
    )
    run = Run(session_id="s1")
    refused = await executor.execute(call("unlock", "c1", door="front", pin="987654", code="x-5521"), run)
    coerced = await executor.execute(call("unlock", "c2", door="front", pin="987654", code="5521"), run)
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.message == (
        "1 problem with the arguments of unlock: $.code: must match the pattern '^[0-9]+$'; "
        "got (a secret value, not shown)"
    )
    assert isinstance(coerced, ErrorEnvelope)
    assert coerced.error.code == "INVALID_ARGS"  # a repaired call to a mutating tool, with its repairs listed
    kept = " ".join(
        [
            *(repr(e) for e in executor.journal.entries()),
            *(r.model_dump_json() for r in run.records),
            refused.model_dump_json(),
            coerced.model_dump_json(),
            log.read_text(),
        ]
    )
    assert "987654" not in kept
    assert "5521" not in kept


async def test_a_scalar_result_whose_output_schema_is_secret_is_redacted_from_the_journal_and_record() -> (
    None
):
    @tool(side_effects="none")
    async def token() -> str:
        return "t0ps3cret"

    secret = token.with_spec(
        token.spec.model_copy(update={"output_schema": {"type": "string", "format": "password"}})
    )
    executor = Executor(Toolset(secret))
    run = Run()
    assert await executor.execute(call("token", "c1"), run) == OkEnvelope(data="t0ps3cret")
    _, result = executor.journal.entries()
    assert result.envelope == {"ok": True, "data": REDACTED}
    assert run.records[0].output == REDACTED


class LosesTrackOfResults(MemoryJournal):
    """A journal whose result writes fail at their commit (as when the database connection drops just after
    `COMMIT` is sent): each may or may not have been written."""

    blocking = True  # written through the executor's journal writer, as a database journal is

    def append(self, entry: JournalEntry) -> JournalEntry:
        if entry.kind == "result":
            raise OutcomeUnknown("the connection was lost after COMMIT was sent")
        return super().append(entry)


PAID: list[str] = []


@tool
def pay(account: str) -> str:
    PAID.append(account)
    return f"paid {account}"


async def test_a_call_whose_result_write_may_have_committed_is_told_it_is_in_doubt_and_not_run_again() -> (
    None
):
    PAID.clear()
    executor = Executor(Toolset(pay), journal=LosesTrackOfResults())
    run = Run(session_id="s1")
    first = await executor.execute(call("pay", "c1", account="A-1"), run)
    assert isinstance(first, ErrorEnvelope)
    assert first.error.code == "INTERNAL"
    assert first.error.details == {"in_doubt": True}
    assert "may or may not have taken effect" in first.error.message
    assert first.error.suggestion is not None
    assert first.error.suggestion.startswith("Do not retry.")
    assert [e.call_id for e in await executor.in_doubt()] == ["c1"]  # the intent, with no result
    again = await executor.execute(call("pay", "c1", account="A-1"), run)
    assert isinstance(again, ErrorEnvelope)
    assert again.error.code == "CONFLICT"  # refused, not run a second time
    assert again.error.details == {"in_doubt": True, "intent_id": 1}  # in doubt, not "running": no wait
    assert not again.error.recoverable
    assert PAID == ["A-1"]
