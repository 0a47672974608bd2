"""An upstream model that is down, slow or answers garbage ends the stream with `error` then
`on_chain_end`; a bug answers a JSON 500 without a traceback; the session is never left held."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI
from openai import AsyncOpenAI, DefaultAsyncHttpxClient

from tether.execution import Principal
from tether.loop import Agent, Limits
from tether.models import OpenAIModel
from tether.serve import ServedAgent
from tether.store import Journal

from .conftest import client, names, new_session, sse_events

pytestmark = pytest.mark.anyio

Handler = Callable[[httpx.Request], httpx.Response]


def upstream(handle: Callable[[httpx.Request], object], limits: Limits | None = None) -> ServedAgent:
    """An agent on the OpenAI SDK whose HTTP requests `handle` answers (no retries: failures show at once)."""

    def build(principal: Principal, journal: Journal) -> Agent:
        transport = httpx.MockTransport(handle)  # pyright: ignore[reportArgumentType] - sync or async handler
        sdk = AsyncOpenAI(
            api_key="k", max_retries=0, http_client=DefaultAsyncHttpxClient(transport=transport)
        )
        return Agent(OpenAIModel("m", client=sdk), principal=principal, limits=limits)

    return ServedAgent("upstream", build)


async def run(app: FastAPI) -> tuple[list[tuple[int, str, dict[str, Any]]], str]:
    async with client(app) as c:
        sid = await new_session(c)
        events = sse_events((await c.post(f"/api/sessions/{sid}/messages", json={"content": "hi"})).text)
        status = (await c.get(f"/api/sessions/{sid}")).json()["status"]
    return events, status


def down(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


def server_error(request: httpx.Request) -> httpx.Response:
    return httpx.Response(502, text="<html>bad gateway</html>")


def garbage_stream(request: httpx.Request) -> httpx.Response:
    body = b"data: {not json at all\n\ndata: [DONE]\n\n"
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


@pytest.mark.parametrize("handle", [down, server_error, garbage_stream], ids=["down", "5xx", "garbage"])
async def test_a_failing_upstream_ends_the_stream_with_error_then_chain_end(
    make_app: Callable[..., FastAPI], handle: Handler
) -> None:
    events, status = await run(make_app(upstream(handle)))
    assert names(events)[-2:] == ["error", "on_chain_end"]
    error: dict[str, str] = events[-2][2]["data"]
    assert error["error"] == "MODEL_ERROR"
    assert "Traceback" not in json.dumps(error)
    assert status == "error"


async def test_a_slow_upstream_is_cut_off_by_the_wall_time_limit_not_left_hanging(
    make_app: Callable[..., FastAPI],
) -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        return httpx.Response(200)

    started = time.monotonic()
    events, status = await run(make_app(upstream(slow, Limits(max_wall_time_s=0.5))))
    assert time.monotonic() - started < 10
    assert names(events)[-1] == "on_chain_end"
    assert events[-1][2]["reason"] == "max_wall_time"
    assert status == "idle"


async def test_a_bug_in_a_run_still_ends_its_stream_cleanly(make_app: Callable[..., FastAPI]) -> None:
    from tether.models import ScriptedModel

    def build(principal: Principal, journal: Journal) -> Agent:
        return Agent(ScriptedModel([]), principal=principal)  # asked for a turn it does not have: a UserError

    events, status = await run(make_app(ServedAgent("broken", build)))
    assert names(events)[-2:] == ["error", "on_chain_end"]
    assert events[-2][2]["data"] == {
        "error": "INTERNAL",
        "message": "UserError: ScriptedModel ran out of turns: asked for turn 1 of 0.",
    }
    assert status == "error"


async def test_a_bug_before_the_run_answers_a_json_500_and_releases_the_session(
    make_app: Callable[..., FastAPI],
) -> None:
    def build(principal: Principal, journal: Journal) -> Agent:
        raise RuntimeError("secret internals")

    app = make_app(ServedAgent("broken", build))
    transport = httpx.ASGITransport(
        app=app, raise_app_exceptions=False
    )  # the server logs it; the client sees JSON
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        sid = await new_session(c)
        response = await c.post(f"/api/sessions/{sid}/messages", json={"content": "hi"})
        status = (await c.get(f"/api/sessions/{sid}")).json()["status"]
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "INTERNAL"
    assert "secret" not in response.text
    assert "Traceback" not in response.text
    assert status == "error"


async def test_unknown_routes_and_methods_answer_in_the_error_shape(make_app: Callable[..., FastAPI]) -> None:
    from .conftest import scripted

    async with client(make_app(scripted("a", ["hi"]))) as c:
        missing = await c.get("/api/nothing")
        wrong = await c.delete("/api/agents")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "NOT_FOUND"
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
