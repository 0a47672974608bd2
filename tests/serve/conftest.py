"""Apps to test against: agents driven by scripted models, each run with a fresh script, and helpers that
read an event stream the way a client does."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi import FastAPI

from tether.execution import Principal
from tether.loop import Agent
from tether.models import Model, ScriptedModel
from tether.serve import ServeConfig, ServedAgent, create_app
from tether.store import Journal
from tether.tools import ToolsLike


def scripted(
    name: str,
    turns: Sequence[str],
    tools: ToolsLike = None,
    *,
    delay_s: float = 0.0,
    model: Callable[[], Model] | None = None,
) -> ServedAgent:
    """An agent whose every run replays `turns` (hermes dialect), or streams from a new `model()`."""

    def build(principal: Principal, journal: Journal) -> Agent:
        chosen = model() if model is not None else ScriptedModel(turns, delay_s=delay_s)
        return Agent(chosen, tools, dialect="hermes", principal=principal)

    return ServedAgent(name, build, f"{name} (scripted)")


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., FastAPI]:
    def make(*agents: ServedAgent, **options: Any) -> FastAPI:
        options.setdefault("database", f"sqlite:///{tmp_path / 'serve.db'}")
        options.setdefault("rate_limit", None)
        return create_app(ServeConfig(agents=agents, **options))

    return make


@asynccontextmanager
async def client(app: FastAPI, key: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://tether.test", headers=headers) as c:
        yield c


def sse_events(text: str) -> list[tuple[int, str, dict[str, Any]]]:
    """`(id, event, data)` of each SSE event in a response body (comments and pings skipped)."""
    events: list[tuple[int, str, dict[str, Any]]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            if name in ("id", "event", "data"):
                fields[name] = value
        if "data" in fields:
            events.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
    return events


def names(events: Sequence[tuple[int, str, dict[str, Any]]]) -> list[str]:
    return [e for _, e, _ in events]


async def new_session(c: httpx.AsyncClient, agent: str | None = None) -> str:
    response = await c.post("/api/sessions", json={} if agent is None else {"agent": agent})
    assert response.status_code == 201, response.text
    return response.json()["session_id"]
