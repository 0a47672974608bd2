"""The agent API: sessions, messages streamed as SSE or NDJSON, history, reconnect, needs and cancel."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi import FastAPI

from tether import Agent, EndTurn, NeedsInput, tool
from tether.execution import Principal
from tether.models import FunctionModel, ModelRequest, ScriptedModel
from tether.serve import ServedAgent
from tether.store import Journal

from .conftest import call, client, names, new_session, scripted, sse_events, until_running

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool(side_effects="none")
def book(room: str, hour: int | None = None) -> str:
    """Book a room at an hour."""
    if hour is None:
        raise NeedsInput(hour="At what hour?")
    return f"booked {room} at {hour}"


TWO_CALLS = [call("add", a=1, b=2) + call("add", a=3, b=4), "1+2=3 and 3+4=7."]


async def test_a_message_streams_its_run_as_sse_with_numbered_events_ending_with_chain_end(
    make_app: Callable[..., FastAPI],
) -> None:
    async with client(make_app(scripted("calc", TWO_CALLS, [add]))) as c:
        sid = await new_session(c)
        response = await c.post(f"/api/sessions/{sid}/messages", json={"content": "add them"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    assert [seq for seq, _, _ in events] == list(range(1, len(events) + 1))
    assert names(events)[0] == "on_chain_start"
    assert names(events)[-1] == "on_chain_end"
    assert names(events).count("on_tool_start") == 2
    ends = {data["call_id"]: data["envelope"] for _, name, data in events if name == "on_tool_end"}
    assert ends == {
        "call_0": {"ok": True, "data": 3},
        "call_1": {"ok": True, "data": 7},
    }  # they run concurrently
    assert events[-1][2]["data"] == "1+2=3 and 3+4=7."
    assert all(event == data["event"] for _, event, data in events)


async def test_ndjson_on_request_carries_the_same_events_with_their_seq(
    make_app: Callable[..., FastAPI],
) -> None:
    async with client(make_app(scripted("calc", TWO_CALLS, [add]))) as c:
        sid = await new_session(c)
        response = await c.post(
            f"/api/sessions/{sid}/messages",
            json={"content": "add"},
            headers={"Accept": "application/x-ndjson"},
        )
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [line["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert lines[-1]["event"] == "on_chain_end"


async def test_history_is_chat_message_v2_with_a_record_of_every_call(
    make_app: Callable[..., FastAPI],
) -> None:
    async with client(make_app(scripted("calc", TWO_CALLS, [add]))) as c:
        sid = await new_session(c)
        await c.post(f"/api/sessions/{sid}/messages", json={"content": "add them"})
        history = (await c.get(f"/api/sessions/{sid}/messages")).json()
        listed = (await c.get("/api/sessions")).json()
    assert history == [
        {"role": "user", "content": "add them", "toolCalls": []},
        {
            "role": "assistant",
            "content": "1+2=3 and 3+4=7.",
            "toolCalls": [
                {"toolType": "function", "toolName": "add", "input": {"a": 1, "b": 2}, "output": 3},
                {"toolType": "function", "toolName": "add", "input": {"a": 3, "b": 4}, "output": 7},
            ],
        },
    ]
    assert [(s["session_id"], s["agent"], s["title"], s["status"]) for s in listed] == [
        (sid, "calc", "add them", "idle")
    ]


async def test_a_second_message_continues_the_conversation(make_app: Callable[..., FastAPI]) -> None:
    seen: list[int] = []

    def reply(request: ModelRequest) -> str:
        seen.append(len(request.messages))  # the system prompt, then the conversation
        return f"heard {len(request.messages)}"

    def model() -> FunctionModel:
        return FunctionModel(reply)

    async with client(make_app(scripted("echo", [], model=model))) as c:
        sid = await new_session(c)
        await c.post(f"/api/sessions/{sid}/messages", json={"content": "one"})
        await c.post(f"/api/sessions/{sid}/messages", json={"content": "two"})
        history = (await c.get(f"/api/sessions/{sid}/messages")).json()
    assert seen == [2, 4]  # the second run's model saw the first exchange
    assert [(m["role"], m["content"]) for m in history] == [
        ("user", "one"), ("assistant", "heard 2"), ("user", "two"), ("assistant", "heard 4"),
    ]  # fmt: skip


async def test_reconnecting_with_last_event_id_replays_what_was_missed_then_follows_live(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(scripted("slow", ["one two three four five six"], delay_s=0.05))
    async with client(app) as c:
        sid = await new_session(c)
        first = asyncio.create_task(c.post(f"/api/sessions/{sid}/messages", json={"content": "go"}))
        await until_running(c, sid)
        again = await c.get(f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "2"})
        whole = await first
        by_query = await c.get(f"/api/sessions/{sid}/events", params={"after": 0})
    complete = sse_events(whole.text)
    assert sse_events(again.text) == complete[2:]
    assert sse_events(by_query.text) == complete
    assert names(complete)[-1] == "on_chain_end"


async def test_a_second_message_while_a_run_is_active_is_refused_with_409(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(scripted("slow", ["a b c d e f"], delay_s=0.05))
    async with client(app) as c:
        sid = await new_session(c)
        first = asyncio.create_task(c.post(f"/api/sessions/{sid}/messages", json={"content": "go"}))
        await until_running(c, sid)
        second = await c.post(f"/api/sessions/{sid}/messages", json={"content": "again"})
        await first
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "RUN_ACTIVE"
    assert "/events" in second.json()["error"]["suggestion"]


async def test_a_needs_is_answered_by_posting_the_missing_fields(make_app: Callable[..., FastAPI]) -> None:
    turns = [call("book", room="blue"), "Which hour?", call("book", room="blue", hour=9), "Booked blue at 9."]
    runs: list[list[str]] = [turns[:2], turns[2:]]

    def model() -> ScriptedModel:
        return ScriptedModel(runs.pop(0))

    async with client(make_app(scripted("rooms", [], [book], model=model))) as c:
        sid = await new_session(c)
        asked = sse_events(
            (await c.post(f"/api/sessions/{sid}/messages", json={"content": "book blue"})).text
        )
        needs = [data for _, name, data in asked if name == "needs"]
        status = (await c.get(f"/api/sessions/{sid}")).json()["status"]
        incomplete = await c.post(
            f"/api/sessions/{sid}/needs", json={"call_id": needs[0]["call_id"], "values": {"x": 1}}
        )
        unknown = await c.post(f"/api/sessions/{sid}/needs", json={"call_id": "nope", "values": {"hour": 9}})
        answered = await c.post(
            f"/api/sessions/{sid}/needs", json={"call_id": needs[0]["call_id"], "values": {"hour": 9}}
        )
    assert needs == [
        {
            "run_id": needs[0]["run_id"],
            "event": "needs",
            "call_id": "call_0",
            "needs": {"hour": "At what hour?"},
        }
    ]
    assert status == "needs"
    assert incomplete.status_code == 422
    assert incomplete.json()["error"]["code"] == "NEEDS_INCOMPLETE"
    assert unknown.status_code == 409
    events = sse_events(answered.text)
    assert [d["envelope"] for _, n, d in events if n == "on_tool_end"] == [
        {"ok": True, "data": "booked blue at 9"}
    ]
    assert events[-1][2]["data"] == "Booked blue at 9."


async def test_cancel_stops_the_model_and_tools_answers_every_call_and_the_session_takes_the_next_message(
    make_app: Callable[..., FastAPI],
) -> None:
    started = asyncio.Event()

    @tool(side_effects="none")
    async def wait_long(seconds: float) -> str:
        """Wait."""
        started.set()
        await asyncio.sleep(seconds)
        return "waited"

    runs = [[call("wait_long", seconds=30), "never"], ["fresh start"]]

    def model() -> ScriptedModel:
        return ScriptedModel(runs.pop(0))

    async with client(make_app(scripted("waiter", [], [wait_long], model=model))) as c:
        sid = await new_session(c)
        run = asyncio.create_task(c.post(f"/api/sessions/{sid}/messages", json={"content": "wait"}))
        await asyncio.wait_for(started.wait(), 5)
        cancelled = await c.post(f"/api/sessions/{sid}/cancel")
        events = sse_events((await asyncio.wait_for(run, 5)).text)
        status = (await c.get(f"/api/sessions/{sid}")).json()["status"]
        again = sse_events((await c.post(f"/api/sessions/{sid}/messages", json={"content": "hi"})).text)
        idle = await c.post(f"/api/sessions/{sid}/cancel")
    assert cancelled.status_code == 202
    assert cancelled.json() == {"cancelled": True}
    assert names(events)[-3:] == ["on_tool_end", "error", "on_chain_end"]
    assert events[-3][2]["envelope"]["error"]["code"] == "CANCELLED"
    assert events[-2][2]["data"]["error"] == "CANCELLED"
    assert events[-1][2]["reason"] == "cancelled"
    assert status == "cancelled"
    assert again[-1][2]["data"] == "fresh start"
    assert idle.json() == {"cancelled": False}


async def test_the_default_agent_is_the_first_and_unknown_names_are_404(
    make_app: Callable[..., FastAPI],
) -> None:
    async with client(make_app(scripted("first", ["hi"]), scripted("second", ["hi"]))) as c:
        default = await c.post("/api/sessions", json={})
        unknown = await c.post("/api/sessions", json={"agent": "third"})
        agents = (await c.get("/api/agents")).json()
    assert default.json()["agent"] == "first"
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "UNKNOWN_AGENT"
    assert "first, second" in unknown.json()["error"]["suggestion"]
    assert agents == [
        {"name": "first", "description": "first (scripted)"},
        {"name": "second", "description": "second (scripted)"},
    ]


async def test_an_idempotency_key_makes_session_creation_safe_to_retry(
    make_app: Callable[..., FastAPI],
) -> None:
    async with client(make_app(scripted("a", ["hi"]), scripted("b", ["hi"]))) as c:
        first = await c.post("/api/sessions", json={}, headers={"Idempotency-Key": "k1"})
        retry = await c.post("/api/sessions", json={}, headers={"Idempotency-Key": "k1"})
        other = await c.post("/api/sessions", json={}, headers={"Idempotency-Key": "k2"})
        reused = await c.post("/api/sessions", json={"agent": "b"}, headers={"Idempotency-Key": "k1"})
    assert (first.status_code, retry.status_code, other.status_code) == (201, 200, 201)
    assert first.json()["session_id"] == retry.json()["session_id"] != other.json()["session_id"]
    assert reused.status_code == 409
    assert reused.json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"


async def test_invalid_requests_get_422_naming_the_field(make_app: Callable[..., FastAPI]) -> None:
    async with client(make_app(scripted("a", ["hi"]))) as c:
        sid = await new_session(c)
        empty = await c.post(f"/api/sessions/{sid}/messages", json={"content": ""})
        missing = await c.post(f"/api/sessions/{sid}/messages", json={"text": "hi"})
        not_json = await c.post(
            f"/api/sessions/{sid}/messages", content=b"{", headers={"content-type": "application/json"}
        )
        no_run = await c.get(f"/api/sessions/{sid}/events")
        await c.post(f"/api/sessions/{sid}/messages", json={"content": "hi"})
        bad_id = await c.get(f"/api/sessions/{sid}/events", headers={"Last-Event-ID": "abc"})
    assert empty.status_code == missing.status_code == not_json.status_code == 422
    assert empty.json()["error"]["message"].startswith("content:")
    assert missing.json()["error"]["message"].startswith("content: Field required")
    assert no_run.status_code == 404
    assert no_run.json()["error"]["code"] == "NO_RUN"
    assert bad_id.status_code == 400
    assert bad_id.json()["error"]["code"] == "BAD_LAST_EVENT_ID"


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="no speech engine: say makes no audio file")
async def test_a_say_reaches_clients_without_the_servers_audio_file_which_is_deleted(
    make_app: Callable[..., FastAPI], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the speech engine writes its WAV files
    turns = [call("say", utterance="Hello there") + call("end_turn")]

    def build(principal: Principal, journal: Journal) -> Agent:
        return Agent(ScriptedModel(turns), dialect="hermes", termination=EndTurn(), principal=principal)

    async with client(make_app(ServedAgent("voice", build))) as c:
        sid = await new_session(c)
        response = await c.post(f"/api/sessions/{sid}/messages", json={"content": "greet me"})
    speech = [data for _, name, data in sse_events(response.text) if name == "speech"]
    assert [(s["utterance"], s["audio"]) for s in speech] == [("Hello there", None)]
    assert list(tmp_path.glob("*.wav")) == []
