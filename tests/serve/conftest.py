"""Apps to test against: agents driven by scripted models, each run with a fresh script, and helpers that
read an event stream the way a client does."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
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


async def until_running(c: httpx.AsyncClient, sid: str, timeout_s: float = 10.0) -> None:
    """Wait until a session's run has started: a request sent just before may not have reached the app."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while (await c.get(f"/api/sessions/{sid}")).json()["status"] != "running":
        assert asyncio.get_running_loop().time() < deadline, (
            f"session {sid}'s run did not start in {timeout_s} s"
        )
        await asyncio.sleep(0.01)


CHILD = Path(__file__).with_name("server_child.py")


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A new, empty database on the session's PostgreSQL server."""
    import psycopg
    from psycopg import sql

    name = f"s_{uuid.uuid4().hex[:12]}"
    admin = postgres_server.replace("postgresql+psycopg", "postgresql") + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return f"{postgres_server}/{name}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Worker:
    """A `server_child.py` process serving on a free port."""

    def __init__(self, database: str, grace_s: float = 10.0, rate: int = 1000):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, str(CHILD), database, str(self.port), str(grace_s), str(rate)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the worker exited: {self.process.stdout.read() if self.process.stdout else ''!r}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the worker did not start within 60 s")

    def client(self, key: str = "k-alice") -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


@pytest.fixture
def workers() -> Iterator[Callable[..., Worker]]:
    """Starts workers that are stopped when the test ends."""
    started: list[Worker] = []

    def start(database: str, grace_s: float = 10.0, rate: int = 1000) -> Worker:
        worker = Worker(database, grace_s, rate)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop(signal.SIGKILL)
        if worker.process.stdout is not None:
            worker.process.stdout.close()
