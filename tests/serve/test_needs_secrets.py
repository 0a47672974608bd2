"""A `needs` that asks for a secret: the answer reaches the model and the tool, but never the database in clear.

The attack: a login tool asks for the password its input schema marks secret, the user answers it through
`POST /needs`, the model copies it from the prompt into its call and its text, and the tool echoes it in a
field its schema does not mark. Then the server's SQLite file and its WAL are searched for the password.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI

from _secret_tools import PASSWORD_FIELD, marked
from tether import NeedsInput, tool
from tether.models import FunctionModel, ModelRequest
from tether.tools import REDACTED
from tether.types import UserMessage

from .conftest import call, client, new_session, scripted, sse_events

pytestmark = pytest.mark.anyio

PASSWORD = 'hü"nter-Zq9Kx7'  # non-ASCII and a quote: JSON escapes it in the prompt and in the model's call
CORE = "Zq9Kx7"  # what survives any escaping
received: list[str] = []


@tool(side_effects="none")
def login(user: str, password: str | None = None, otp: str | None = None) -> dict[str, str]:
    """Log in (asks for the password, and a one-time code, when they are missing)."""
    if password is None or otp is None:
        raise NeedsInput(password="Your password?", otp="The code from your app?")
    received.append(password)
    return {"greeting": f"welcome {user}, {password} works", "otp_used": otp}


LOGIN = marked(login, inputs={"password": PASSWORD_FIELD})


ANSWER = re.compile(r"The user answered what login needed \(call \w+\): (\{.*\})\. Call it again")


def model() -> FunctionModel:
    """Asks for the login; once the user answered, reads the values from the prompt and calls again."""

    def reply(request: ModelRequest) -> str:
        last = request.messages[-1]
        text = last.content if isinstance(last, UserMessage) else ""
        if answer := ANSWER.search(text):
            values = json.loads(answer[1])
            return f"Logging in with {values['password']}." + call("login", user="ada", **values)
        return call("login", user="ada") if text == "log in" else "You are logged in."

    return FunctionModel(reply)


def stored_bytes(database: Path) -> str:
    files = [p for p in (database, database.with_name(database.name + "-wal")) if p.exists()]
    return b"".join(p.read_bytes() for p in files).decode("latin-1")


async def answered_login(c: httpx.AsyncClient) -> tuple[str, str, str]:
    """A new session's login asks for the password, and the user answers it: the session's id, the call's,
    and the body of the stream of the run that the answer starts."""
    sid = await new_session(c)
    asked = sse_events((await c.post(f"/api/sessions/{sid}/messages", json={"content": "log in"})).text)
    call_id = next(data["call_id"] for _, name, data in asked if name == "needs")
    answer = {"password": PASSWORD, "otp": "otp-481516"}
    body = (await c.post(f"/api/sessions/{sid}/needs", json={"call_id": call_id, "values": answer})).text
    return sid, call_id, body


async def test_a_secret_answered_to_a_needs_reaches_the_tool_but_not_the_database(
    make_app: Callable[..., FastAPI], tmp_path: Path
) -> None:
    received.clear()
    async with client(make_app(scripted("bank", [], [LOGIN], model=model))) as c:
        sid, call_id, body = await answered_login(c)
        answered = sse_events(body)
        history: list[dict[str, Any]] = (await c.get(f"/api/sessions/{sid}/messages")).json()

    assert received == [PASSWORD]  # the model read it from the prompt and the tool got it
    assert answered[-1][2]["data"] == "You are logged in."
    on_disk = stored_bytes(tmp_path / "serve.db")
    assert "tether_session_messages" in on_disk
    assert CORE not in on_disk, "the password is stored in clear"
    assert "otp-481516" in on_disk  # a field the schema does not mark is stored as given
    prompt = next(m["content"] for m in history if m["role"] == "user" and "answered" in m["content"])
    assert prompt == (
        f'The user answered what login needed (call {call_id}): {{"password": "{REDACTED}", '
        '"otp": "otp-481516"}. Call it again with these values.'
    )
    assert CORE not in json.dumps(history)


async def test_the_stream_that_follows_a_secret_answer_never_shows_it(
    make_app: Callable[..., FastAPI],
) -> None:
    """The model repeats the password in its text and its call, and the tool echoes it: the events the
    client gets over the stream show `***` (the value is known from the answer before the run starts)."""
    received.clear()
    async with client(make_app(scripted("bank", [], [LOGIN], model=model))) as c:
        _, _, body = await answered_login(c)
    assert received == [PASSWORD]
    assert CORE not in body
    assert "Zq9K" not in body  # not even the start of it, held back in a chunk
    events = sse_events(body)
    streamed = "".join(data["data"] for _, name, data in events if name == "on_chat_model_stream")
    assert streamed == f"Logging in with {REDACTED}.You are logged in."
    start = next(data for _, name, data in events if name == "on_tool_start")
    assert start["call"]["arguments"]["password"] == REDACTED
    end = next(data for _, name, data in events if name == "on_tool_end")
    assert end["envelope"]["data"]["greeting"] == f"welcome ada, {REDACTED} works"


async def test_an_answer_the_schema_does_not_mark_secret_is_stored_as_given(
    make_app: Callable[..., FastAPI], tmp_path: Path
) -> None:
    @tool(side_effects="none")
    def book(room: str, hour: int | None = None) -> str:
        """Book a room at an hour."""
        if hour is None:
            raise NeedsInput(hour="At what hour?")
        return f"booked {room} at {hour}"

    def reply(request: ModelRequest) -> str:
        last = request.messages[-1]
        text = last.content if isinstance(last, UserMessage) else ""
        if text == "book":
            return call("book", room="blue")
        return call("book", room="blue", hour=17) if "answered" in text else "Booked."

    async with client(make_app(scripted("rooms", [], [book], model=lambda: FunctionModel(reply)))) as c:
        sid = await new_session(c)
        asked = sse_events((await c.post(f"/api/sessions/{sid}/messages", json={"content": "book"})).text)
        call_id = next(data["call_id"] for _, name, data in asked if name == "needs")
        await c.post(f"/api/sessions/{sid}/needs", json={"call_id": call_id, "values": {"hour": 17}})
        history: list[dict[str, Any]] = (await c.get(f"/api/sessions/{sid}/messages")).json()
    assert any(m["role"] == "user" and '{"hour": 17}' in m["content"] for m in history)
    assert REDACTED not in json.dumps(history)
