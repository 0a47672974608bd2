"""The executor's shortcuts for the usual call give exactly what the full path gives.

A plain value (a number, an ASCII string, a flag, or a flat object of those) skips the JSON and storable
passes; a journal in memory is written directly rather than through the writer; the idempotency guard
decides without a coroutine when the journal answers at once. Each is checked here against the full path.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import pydantic_core
import pytest

from tether import envelopes
from tether.execution import Executor, Principal, Run
from tether.execution._plain import plain_arguments, plain_scalar
from tether.store import JournalEntry, MemoryJournal
from tether.store.internal import storable
from tether.tools import Toolset, tool
from tether.types import OkEnvelope, ToolCall, ToolCallRecord

pytestmark = pytest.mark.anyio

PLAIN: list[Any] = [0, -1, 2**63, -(2**64) + 1, True, False, None, 1.5, -0.0, 1e308, "", "abc", "NaN in text"]
NOT_PLAIN: list[Any] = [
    2**64,
    2**20_000,
    float("nan"),
    float("inf"),
    "é",
    "a\x00b",
    "\ud800",
    b"bytes",
    [1, 2],
    {"k": "v"},
    (1,),
]


def shown(value: Any) -> str:
    return f"int of {value.bit_length()} bits" if isinstance(value, int) else ascii(value)[:20]


@pytest.mark.parametrize("value", PLAIN, ids=shown)
def test_a_plain_scalar_is_what_the_json_and_storable_passes_return_unchanged(value: Any) -> None:
    assert plain_scalar(value)
    jsonable = pydantic_core.to_jsonable_python(value, fallback=repr)
    assert (jsonable, type(jsonable)) == (value, type(value))
    wrapped = {"v": value}
    assert storable(wrapped) == wrapped  # the same, or an equal copy (a string that mentions NaN)


@pytest.mark.parametrize("value", NOT_PLAIN, ids=shown)
def test_anything_else_takes_the_full_path(value: Any) -> None:
    assert not plain_scalar(value)
    assert not plain_arguments({"v": value})


def test_flat_objects_under_plain_names_are_plain_arguments() -> None:
    assert plain_arguments({"a": 1, "b": "x", "c": None})
    assert plain_arguments({})
    assert not plain_arguments({"é": 1})
    assert not plain_arguments({"a\x00": 1})
    assert not plain_arguments({1: 1})  # pyright: ignore[reportArgumentType] - a model's JSON never has one


RESULTS: list[Any] = [*PLAIN, *NOT_PLAIN[:-3], [1, "é"], {"k": float("nan")}]


@pytest.mark.parametrize("result", RESULTS, ids=shown)
async def test_a_tools_result_reaches_the_envelope_journal_and_record_as_the_full_path_makes_it(
    result: Any,
) -> None:
    @tool(side_effects="none")
    async def give() -> Any:
        return result

    executor = Executor(Toolset(give))
    run = Run()
    envelope = await executor.execute(ToolCall(id="c1", name="give"), run)
    expected: dict[str, Any] = storable(
        pydantic_core.to_jsonable_python(
            envelopes.ok(pydantic_core.to_jsonable_python(result, fallback=repr, bytes_mode="base64")),
            fallback=repr,
        )
    )
    assert envelope == envelopes.from_json(expected)
    assert isinstance(envelope, OkEnvelope)
    assert envelope.model_dump_json() == OkEnvelope(data=expected["data"]).model_dump_json()
    _, entry = executor.journal.entries()
    assert entry.envelope == expected
    assert run.records == [
        ToolCallRecord(toolType="function", toolName="give", input={}, output=expected["data"])
    ]
    assert run.records[0].input is not entry.arguments  # the record's copy, as validation makes one


ARGUMENTS: list[dict[str, Any]] = [
    {"text": "plain", "n": 2**63},
    {"text": "é", "n": 1},
    {"text": "a\x00b", "n": 1},
    {"text": "\ud800", "n": 1},
    {"text": "x", "n": 2**70},
]


@pytest.mark.parametrize("arguments", ARGUMENTS, ids=ascii)
async def test_arguments_reach_the_journal_and_record_as_the_full_path_makes_them(
    arguments: dict[str, Any],
) -> None:
    @tool(side_effects="none")
    async def take(text: str, n: int) -> str:
        return "done"

    executor = Executor(Toolset(take))
    run = Run()
    the_call = ToolCall(id="c1", name="take", arguments=arguments)
    assert await executor.execute(the_call, run) == OkEnvelope(data="done")
    expected = storable(pydantic_core.to_jsonable_python(arguments, fallback=repr))
    intent, result = executor.journal.entries()
    assert intent.arguments == result.arguments == run.records[0].input == expected
    assert intent.arguments is not the_call.arguments  # a copy: changing the call later changes no entry


class ThroughTheWriter(MemoryJournal):
    """The same journal, declared blocking: the executor writes it through `JournalWriter` (in a thread)."""

    blocking = True


@tool
async def book(room: str) -> str:
    await anyio.sleep(0.01)  # still running when its duplicate comes
    return f"booked {room}"


@tool(side_effects="none")
async def look(room: str) -> str:
    return f"{room} is free"


CALLS = [
    ToolCall(id="c1", name="book", arguments={"room": "Blue"}, why="Reserve a room for the offsite"),
    ToolCall(id="c1", name="book", arguments={"room": "Blue"}),  # a repeat: replayed
    ToolCall(id="c2", name="look", arguments={"room": "Red"}),
    ToolCall(id="c3", name="book", arguments={"room": 5}),  # refused: INVALID_ARGS
    ToolCall(id="c4", name="nope"),  # refused: UNKNOWN_TOOL
]


def comparable(entry: JournalEntry) -> dict[str, Any]:
    fields = dataclasses.asdict(entry)
    for varying in ("created_at", "duration_ms", "run_id"):
        fields.pop(varying)
    return fields


async def test_a_journal_written_directly_gets_what_the_writer_would_write() -> None:
    seen: list[tuple[list[Any], list[dict[str, Any]], list[ToolCallRecord]]] = []
    for journal in (MemoryJournal(), ThroughTheWriter()):
        executor = Executor(Toolset(book, look), journal=journal)
        run = Run(principal=Principal("u1"), session_id="s1")
        answers = [await executor.execute(c, run) for c in CALLS]
        answers += await executor.execute_all(
            [ToolCall(id="c5", name="book", arguments={"room": "Green"})] * 2, run
        )  # the second one while the first runs: CONFLICT
        seen.append((answers, [comparable(e) for e in journal.entries()], run.records))
    direct, written = seen
    assert direct == written
    codes = [getattr(getattr(a, "error", None), "code", "ok") for a in direct[0]]
    assert codes == ["ok", "ok", "ok", "INVALID_ARGS", "UNKNOWN_TOOL", "ok", "CONFLICT"]
    assert [e["kind"] for e in direct[1]] == [
        *("intent", "result", "intent", "result", "refusal", "refusal", "intent", "refusal", "result")
    ]


async def test_journal_entries_are_made_by_position_and_equal_those_made_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tether.execution import _executor

    # the store's field order is what the executor's tuple follows; if it changes, entries are made by name
    assert _executor._ENTRY_IN_ORDER  # pyright: ignore[reportPrivateUsage]
    seen: list[list[dict[str, Any]]] = []
    for by_position in (True, False):
        monkeypatch.setattr(_executor, "_ENTRY_IN_ORDER", by_position)
        journal = MemoryJournal()
        executor = Executor(Toolset(book, look), journal=journal)
        run = Run(principal=Principal("u1"), session_id="s1")
        for c in CALLS:
            await executor.execute(c, run)
        entries = journal.entries()
        assert entries[0].extra == {}
        assert entries[0].extra is not entries[1].extra  # each its own, as the field's default makes
        seen.append([comparable(e) for e in entries])
    assert seen[0] == seen[1]
    assert seen[0][0]["why"] == "Reserve a room for the offsite"


async def test_a_result_entry_keeps_its_intents_columns_as_the_entry_made_by_name_would() -> None:
    """The result entry is made from its intent's values (the same call, run and arguments): equal to one
    made afresh from the attempt, as every result entry was before."""
    from tether.execution import _executor
    from tether.execution._guards import Attempt

    journal = MemoryJournal()
    executor = Executor(Toolset(book, look), journal=journal)
    run = Run(principal=Principal("u1"), session_id="s1")
    for c in CALLS[:3]:
        await executor.execute(c, run)
    entries = journal.entries()
    for result in (e for e in entries if e.kind == "result"):
        intent = journal.entry(result.intent_id or 0)
        assert intent is not None
        tool = executor.toolset.get(intent.tool)
        the_call = next(c for c in CALLS if c.id == intent.call_id)
        validated = tool.validate_call(the_call) if tool is not None else None
        attempt = Attempt(validated.call if validated else the_call, tool, run, executor.policy)
        attempt.idempotency_key = intent.idempotency_key
        assert result.envelope is not None
        by_name = executor._entry(  # pyright: ignore[reportPrivateUsage]
            "result", attempt, attempt.arguments(), result.envelope, None, result.duration_ms, intent.id
        )
        by_name.created_at, by_name.id = result.created_at, result.id
        assert result == by_name
        made = _executor._result_entry(  # pyright: ignore[reportPrivateUsage]
            intent, result.envelope, None, result.duration_ms or 0.0, result.created_at, result.pid or 0
        )
        made.id = result.id
        assert made == result


def test_the_schema_guards_allow_is_the_dataclass_s_own() -> None:
    from tether.execution import Allow
    from tether.execution._decisions import allowed

    validated = look.validate_call(ToolCall(id="c1", name="look", arguments={"room": "Red"}))
    made = allowed(validated)
    assert type(made) is Allow
    assert made == Allow(validated=validated)
    assert made.validated is validated
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.validated = None  # pyright: ignore[reportAttributeAccessIssue]


def test_a_valid_call_s_validated_call_is_the_named_tuple_validation_makes() -> None:
    from tether.tools import ValidatedCall

    the_call = ToolCall(id="c1", name="look", arguments={"room": "Red"})
    validated = look.validate_call(the_call)
    assert type(validated) is ValidatedCall
    assert validated == ValidatedCall(the_call, (), {"room": "Red"})
    assert validated.ok
    assert validated.call is the_call
