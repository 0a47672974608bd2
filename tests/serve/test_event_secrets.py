"""Attacks on every way `tether serve` hands a run out, over real HTTP: the agent API's SSE stream (and its
replay to a client that reconnects), the session's history (what the served page renders), the database
file, and the OpenAI-compatible endpoint (its answer, its stream and the `tether-event` comments riding
in it). A login tool's schema marks its password, API key and recovery codes secret, and its result's
token; the tool echoes them in a plain field, and the model repeats them in its answer, split across
stream chunks. None may leave the server in clear."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import openai
import pytest
from fastapi import FastAPI

from _secret_tools import API_KEY, PASSWORD, PASSWORD_FIELD, RECOVERY, SECRET_TEXT, TOKEN, marked
from tether import tool
from tether.models import Model, ModelChunk, ModelRequest, TextChunk
from tether.tools import REDACTED
from tether.types import AssistantMessage

from .conftest import call, client, names, new_session, scripted, sse_events
from .openai_fakes import free_socket, running, url_of

CODE = RECOVERY[0]
SECRETS = [PASSWORD, API_KEY, CODE, TOKEN]
received: list[str] = []


@tool(side_effects="none")
def login(user: str, password: str, profile: dict[str, Any], codes: list[str]) -> dict[str, Any]:
    """Log in."""
    received.append(password)
    return {"greeting": f"welcome {user}, {password} works with {profile['api_key']}", "token": TOKEN}


LOGIN = marked(
    login,
    inputs={
        "password": PASSWORD_FIELD,
        "profile": {"type": "object", "properties": {"api_key": SECRET_TEXT}},
        "codes": {"type": "array", "items": SECRET_TEXT},
    },
    outputs={"token": SECRET_TEXT},
)
TURNS = [
    call("login", user="ada", password=PASSWORD, profile={"api_key": API_KEY}, codes=[CODE]),
    f"Logged in: token {TOKEN}, password {PASSWORD}, code {CODE}.",  # streamed 4 characters a chunk
]
ANSWER = f"Logged in: token {REDACTED}, password {REDACTED}, code {REDACTED}."


def shown(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def stored_bytes(database: Path) -> str:
    files = [p for p in (database, database.with_name(database.name + "-wal")) if p.exists()]
    return b"".join(p.read_bytes() for p in files).decode("latin-1")


def test_the_agent_api_stream_its_replay_the_history_and_the_database_show_no_secret(
    make_app: Callable[..., FastAPI], tmp_path: Path
) -> None:
    received.clear()
    sock = free_socket()
    with running(make_app(scripted("bank", TURNS, [LOGIN])), sock), httpx.Client(base_url=url_of(sock)) as c:
        sid = c.post("/api/sessions", json={}).json()["session_id"]
        with c.stream("POST", f"/api/sessions/{sid}/messages", json={"content": "log in"}) as response:
            assert response.status_code == 200
            stream = "".join(response.iter_text())
        replayed = c.get(f"/api/sessions/{sid}/events").text  # a client that reconnects
        history = c.get(f"/api/sessions/{sid}/messages").text

    assert received == [PASSWORD]  # the tool got the value
    assert shown(stream) == []
    events = sse_events(stream)
    start = next(data for _, name, data in events if name == "on_tool_start")
    assert start["call"]["arguments"] == {
        "user": "ada",
        "password": REDACTED,
        "profile": {"api_key": REDACTED},
        "codes": [REDACTED],
    }
    end = next(data for _, name, data in events if name == "on_tool_end")
    assert end["envelope"]["data"] == {
        "greeting": f"welcome ada, {REDACTED} works with {REDACTED}",
        "token": REDACTED,
    }
    assert "".join(data["data"] for _, name, data in events if name == "on_chat_model_stream") == ANSWER
    assert events[-1][2]["data"] == ANSWER
    assert shown(replayed) == []
    assert sse_events(replayed)[-1][2]["data"] == ANSWER
    assert shown(history) == []
    assert ANSWER in history
    on_disk = stored_bytes(tmp_path / "serve.db")
    assert "tether_session_messages" in on_disk
    assert shown(on_disk) == []


def test_the_openai_endpoint_answers_and_streams_no_secret(make_app: Callable[..., FastAPI]) -> None:
    sock = free_socket()
    ask: Any = [{"role": "user", "content": "log in"}]
    with running(make_app(scripted("bank", TURNS, [LOGIN])), sock):
        client = openai.OpenAI(base_url=f"{url_of(sock)}/v1", api_key="unused", max_retries=0)
        whole = client.chat.completions.create(model="bank", messages=ask)
        pieces = [
            chunk.choices[0].delta.content or ""
            for chunk in client.chat.completions.create(model="bank", messages=ask, stream=True)
            if chunk.choices
        ]
        with httpx.Client(base_url=url_of(sock)) as c:  # the wire itself, `tether-event` comments included
            raw = c.post("/v1/chat/completions", json={"model": "bank", "messages": ask, "stream": True}).text
            body = c.post("/v1/chat/completions", json={"model": "bank", "messages": ask}).text

    assert whole.choices[0].message.content == ANSWER
    assert "".join(pieces) == ANSWER
    assert ": tether-event" in raw
    assert shown(raw) == []
    assert "tether_events" in body
    assert shown(body) == []


PIN = "Kq7zW"  # short: at the end of streamed text, held back until the next character tells


@tool(side_effects="none")
def unlock(pin: str) -> str:
    """Unlock the door."""
    return "unlocked" if pin == PIN else "wrong pin"


UNLOCK = marked(unlock, inputs={"pin": SECRET_TEXT})


class Stalls(Model):
    """Calls `unlock` with the PIN; then writes it at the end of its text and stalls (until cancelled)."""

    def __init__(self, stalled: asyncio.Event):
        self.stalled = stalled

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        if not any(isinstance(m, AssistantMessage) for m in request.messages):  # its first turn
            yield TextChunk(text=call("unlock", pin=PIN))
            return
        yield TextChunk(text=f"Unlocked with pin {PIN}")
        self.stalled.set()  # asked for the next chunk: the last one has been shown (what of it could be)
        await asyncio.Event().wait()


@pytest.mark.anyio
async def test_streamed_text_held_back_when_the_run_is_cancelled_goes_out_redacted(
    make_app: Callable[..., FastAPI],
) -> None:
    """Text held back because it could be the start of a secret (here all of a short one, whose word could
    go on) must reach the client when serve cancels the run mid-stream: redacted, not dropped."""
    stalled = asyncio.Event()
    async with client(make_app(scripted("door", [], [UNLOCK], model=lambda: Stalls(stalled)))) as c:
        sid = await new_session(c)
        run = asyncio.create_task(c.post(f"/api/sessions/{sid}/messages", json={"content": "open up"}))
        await asyncio.wait_for(stalled.wait(), 10)
        assert (await c.post(f"/api/sessions/{sid}/cancel")).json() == {"cancelled": True}
        body = (await asyncio.wait_for(run, 10)).text
        replayed = (await c.get(f"/api/sessions/{sid}/events")).text

    assert PIN not in body
    events = sse_events(body)
    assert names(events)[-2:] == ["error", "on_chain_end"]
    assert events[-1][2]["reason"] == "cancelled"
    streamed = "".join(data["data"] for _, name, data in events if name == "on_chat_model_stream")
    assert streamed == f"Unlocked with pin {REDACTED}"
    assert sse_events(replayed) == events
