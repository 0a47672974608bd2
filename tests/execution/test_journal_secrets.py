"""Attacks on what the executor keeps of a call to a tool whose schema marks secrets: Kalygo's `toolCalls`
records (seed 004), the journal (what `tether audit` shows) and session-log.md (seed 001). Each keeps `***`
for a secret value, by schema and wherever the value is echoed: a plain argument, the result, an error
message, a traceback, the model's why, annotations and repairs."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from _secret_tools import (
    API_KEY,
    PASSWORD,
    RECOVERY,
    SECRET_TEXT,
    TOKEN,
    marked,
    marked_login,
)
from tether import ToolError, tool
from tether.execution import Executor, Run, SessionLog
from tether.store import MemoryJournal
from tether.tools import REDACTED
from tether.types import ToolCall

pytestmark = pytest.mark.anyio

SECRETS = [PASSWORD, API_KEY, *RECOVERY, TOKEN]


@tool(side_effects="none")
def login(
    user: str, password: str, profile: dict[str, Any], codes: list[str], mode: str = "ok"
) -> dict[str, Any]:
    """Log in."""
    if mode == "crash":
        raise ValueError(f"cannot log in {user} with {password!r}")
    if mode == "refuse":
        raise ToolError(
            "DENIED", f"wrong password {password} (key {profile['api_key']})", suggestion=codes[0]
        )
    return {
        "greeting": f"welcome {user}, {password} works with key {profile['api_key']}",
        "token": TOKEN,
        "audit": {"used": [codes[1]], "raw": f"token={TOKEN}"},
    }


LOGIN = marked_login(login)


def login_call(call_id: str = "c1", **changes: Any) -> ToolCall:
    arguments: dict[str, Any] = {
        "user": "ada",
        "password": PASSWORD,
        "profile": {"name": "Ada", "api_key": API_KEY},
        "codes": RECOVERY,
    }
    return ToolCall(id=call_id, name="login", arguments=arguments | changes)


def shown(value: Any) -> list[str]:
    """The secrets `value` (as JSON) shows."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return [s for s in SECRETS if s in text]


async def answered(call: ToolCall, tmp_path: Path, *, recorders: bool) -> tuple[Any, Run, MemoryJournal, str]:
    journal = MemoryJournal()
    log = tmp_path / "session-log.md"
    executor = Executor([LOGIN], journal=journal, recorders=[SessionLog(log)] if recorders else ())
    run = Run()
    envelope = await executor.execute(call, run)
    return envelope, run, journal, log.read_text() if log.exists() else ""


@pytest.mark.parametrize("recorders", [False, True], ids=["record only", "with a recorder"])
async def test_a_record_shows_no_secret_by_schema_nor_echoed(tmp_path: Path, recorders: bool) -> None:
    call = login_call(mode="ok").model_copy(update={"why": f"log in with {PASSWORD}"})
    call = call.model_copy(update={"annotations": (f"# remember {RECOVERY[0]}",)})
    envelope, run, journal, log = await answered(call, tmp_path, recorders=recorders)

    assert envelope.ok
    assert envelope.model_dump()["data"]["token"] == TOKEN  # the model gets the result as the tool gave it
    (record,) = run.records
    assert record.input == {
        "user": "ada",
        "password": REDACTED,
        "profile": {"name": "Ada", "api_key": REDACTED},
        "codes": [REDACTED, REDACTED],
        "mode": "ok",
    }
    assert record.output == {
        "greeting": f"welcome ada, {REDACTED} works with key {REDACTED}",
        "token": REDACTED,
        "audit": {"used": [REDACTED], "raw": f"token={REDACTED}"},
    }
    entries = [asdict(e) for e in journal.entries()]
    assert shown(entries) == []
    assert entries[0]["why"] == f"log in with {REDACTED}"
    assert entries[0]["annotations"] == (f"# remember {REDACTED}",)
    if recorders:
        assert "token: '***'" in log
        assert shown(log) == []
        assert f"why: log in with '{REDACTED}'" in log or f"why: log in with {REDACTED}" in log


async def test_a_secret_echoed_in_a_plain_argument_is_redacted(tmp_path: Path) -> None:
    note = f"for {PASSWORD} and {RECOVERY[1]}"
    _, run, journal, log = await answered(login_call(user="ada", mode=note), tmp_path, recorders=True)
    assert run.records[0].input["mode"] == f"for {REDACTED} and {REDACTED}"
    assert shown([asdict(e) for e in journal.entries()]) == []
    assert shown(log) == []


async def test_an_error_message_quoting_secrets_is_redacted_for_the_records_not_the_model(
    tmp_path: Path,
) -> None:
    envelope, run, journal, log = await answered(login_call(mode="refuse"), tmp_path, recorders=True)
    assert not envelope.ok
    assert PASSWORD in envelope.model_dump_json()  # the model reads its own call's values back
    output = run.records[0].output
    assert output["error"]["message"] == f"wrong password {REDACTED} (key {REDACTED})"
    assert output["error"]["suggestion"] == REDACTED
    assert shown([asdict(e) for e in journal.entries()]) == []
    assert shown(log) == []
    assert "DENIED" in log


async def test_a_crash_quoting_the_password_leaves_no_trace_of_it_in_the_journal(tmp_path: Path) -> None:
    envelope, _, journal, log = await answered(login_call(mode="crash"), tmp_path, recorders=True)
    assert envelope.model_dump()["error"]["code"] == "INTERNAL"
    traces = [e.traceback for e in journal.entries() if e.traceback]
    assert traces, "the journal keeps the traceback"
    assert "ValueError: cannot log in ada with '***'" in traces[0]
    assert shown(traces) == []
    assert shown(log) == []


async def test_a_validation_error_quoting_an_echo_in_a_plain_field_is_redacted(tmp_path: Path) -> None:
    # `user` must be a string: the error message quotes what it got, the password in a list
    envelope, run, journal, log = await answered(login_call(user=[PASSWORD]), tmp_path, recorders=True)
    error = envelope.model_dump()["error"]
    assert error["code"] == "INVALID_ARGS"
    assert PASSWORD in error["message"]  # the model is told what it sent
    assert shown([r.model_dump() for r in run.records]) == []
    assert shown([asdict(e) for e in journal.entries()]) == []
    assert shown(log) == []


async def test_a_short_secret_is_redacted_only_as_a_whole_word(tmp_path: Path) -> None:
    @tool(side_effects="none")
    def unlock(pin: str, note: str) -> str:
        """Unlock."""
        return f"unlocked with {pin}; order 48215 kept"

    run = Run()
    await Executor([marked(unlock, inputs={"pin": SECRET_TEXT})]).execute(
        ToolCall(id="u", name="unlock", arguments={"pin": "4821", "note": "pin 4821 for order 48215"}), run
    )
    (record,) = run.records
    assert record.input == {"pin": REDACTED, "note": f"pin {REDACTED} for order 48215"}
    assert record.output == f"unlocked with {REDACTED}; order 48215 kept"


async def test_a_tool_without_secrets_keeps_its_records_as_given(tmp_path: Path) -> None:
    @tool(side_effects="none")
    def echo(text: str) -> str:
        """Echo."""
        return text

    run = Run()
    await Executor([echo]).execute(ToolCall(id="e", name="echo", arguments={"text": PASSWORD}), run)
    assert run.records[0].input == {"text": PASSWORD}
    assert run.records[0].output == PASSWORD


@tool(side_effects="none")
def note(text: str, mode: str = "ok") -> str:
    """Keep a note (its schemas mark nothing secret)."""
    if mode == "crash":
        raise ValueError(f"cannot keep {text!r}")
    if mode == "refuse":
        raise ToolError("FULL", f"no room for {text}", suggestion=f"shorten {text}")
    return f"noted: {text}"


async def test_a_secret_echoed_by_a_tool_whose_schemas_mark_nothing_is_redacted_in_its_journal(
    tmp_path: Path,
) -> None:
    """The run knows the values a secret-marked tool took (its arguments and its result's token): a later
    call to a plain tool that echoes them, in its arguments, why, result, error message or traceback,
    leaves `***` in the journal, the records and session-log.md (the model still gets what the tool gave)."""
    journal = MemoryJournal()
    log = tmp_path / "session-log.md"
    executor = Executor([LOGIN, note], journal=journal, recorders=[SessionLog(log)])
    run = Run()
    await executor.execute(login_call(mode="ok"), run)
    calls = [
        ToolCall(id="n1", name="note", arguments={"text": f"pw {PASSWORD}"}, why=f"keep {RECOVERY[0]}"),
        ToolCall(id="n2", name="note", arguments={"text": f"{TOKEN}", "mode": "refuse"}),
        ToolCall(id="n3", name="note", arguments={"text": f"key {API_KEY}", "mode": "crash"}),
        ToolCall(id="n4", name="note", arguments={"text": 7, "mode": PASSWORD}),  # invalid: quoted back
    ]
    answers = [await executor.execute(call, run) for call in calls]

    assert answers[0].model_dump()["data"] == f"noted: pw {PASSWORD}"  # the model gets it as the tool gave
    entries = [asdict(e) for e in journal.entries() if e.tool == "note"]
    assert {e["call_id"] for e in entries} == {"n1", "n2", "n3", "n4"}
    assert shown(entries) == []
    assert next(e["arguments"]["text"] for e in entries if e["call_id"] == "n1") == f"pw {REDACTED}"
    assert any(e["why"] == f"keep {REDACTED}" for e in entries)
    assert any(e["traceback"] and "cannot keep" in e["traceback"] for e in entries)
    assert shown([r.model_dump() for r in run.records]) == []
    assert shown(log.read_text()) == []
    assert "noted: pw ***" in log.read_text()


async def test_a_run_without_secrets_keeps_a_plain_tools_journal_as_given() -> None:
    journal = MemoryJournal()
    await Executor([note], journal=journal).execute(
        ToolCall(id="n", name="note", arguments={"text": PASSWORD}), Run()
    )
    assert {e.kind: (e.arguments or {}).get("text") for e in journal.entries()} == {
        "intent": PASSWORD,
        "result": PASSWORD,
    }


async def test_a_plain_call_of_a_batch_echoing_a_secret_another_call_of_it_marks_is_redacted() -> None:
    """The note starts first (a higher priority), before the login whose schema marks the password: the
    batch's secrets are learned before any of its calls runs."""
    journal = MemoryJournal()
    first = ToolCall(id="n", name="note", arguments={"text": f"pw {PASSWORD}"}, priority=9)
    await Executor([LOGIN, note], journal=journal).execute_all([first, login_call(mode="ok")], Run())
    entries = [asdict(e) for e in journal.entries()]
    assert entries[0]["call_id"] == "n"  # the note ran first
    assert shown(entries) == []
