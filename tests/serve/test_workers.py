"""Two real worker processes on one PostgreSQL database share sessions, idempotency and rate limits; a
worker shut down gracefully cancels its runs cleanly and leaves their sessions resumable on another."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Callable

import pytest

from .conftest import Worker
from .test_disconnect import Reader, read_events

pytestmark = pytest.mark.anyio


async def test_two_workers_share_sessions_histories_and_idempotency_keys(
    postgres_url: str, workers: Callable[..., Worker]
) -> None:
    a, b = workers(postgres_url), workers(postgres_url)
    async with a.client() as on_a, b.client() as on_b, b.client("k-bob") as bob_on_b:
        created = await on_a.post("/api/sessions", json={}, headers={"Idempotency-Key": "once"})
        retried = await on_b.post("/api/sessions", json={}, headers={"Idempotency-Key": "once"})
        sid = created.json()["session_id"]
        async with on_a.stream("POST", f"/api/sessions/{sid}/messages", json={"content": "hello"}) as run:
            await read_events(run)
        history = (await on_b.get(f"/api/sessions/{sid}/messages")).json()
        listed = (await on_b.get("/api/sessions")).json()
        stranger = await bob_on_b.get(f"/api/sessions/{sid}/messages")
    assert (created.status_code, retried.status_code) == (201, 200)
    assert retried.json()["session_id"] == sid
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["content"] == " ".join(f"w{i}" for i in range(60))
    assert [s["session_id"] for s in listed] == [sid]
    assert stranger.status_code == 404


async def test_a_run_on_one_worker_holds_its_session_on_the_other(
    postgres_url: str, workers: Callable[..., Worker]
) -> None:
    a, b = workers(postgres_url), workers(postgres_url)
    async with a.client() as on_a, b.client() as on_b:
        sid = (await on_a.post("/api/sessions", json={})).json()["session_id"]
        async with on_a.stream("POST", f"/api/sessions/{sid}/messages", json={"content": "go"}) as run:
            reader = Reader(run)
            await reader.events(3)
            second = await on_b.post(f"/api/sessions/{sid}/messages", json={"content": "me too"})
            status = (await on_b.get(f"/api/sessions/{sid}")).json()["status"]
            follow = await on_b.get(f"/api/sessions/{sid}/events")
            await reader.events()
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "RUN_ACTIVE"
    assert follow.status_code == 409
    assert follow.json()["error"]["code"] == "RUN_ON_ANOTHER_WORKER"
    assert status == "running"


async def test_a_run_is_cancelled_through_either_worker(
    postgres_url: str, workers: Callable[..., Worker]
) -> None:
    a, b = workers(postgres_url), workers(postgres_url)
    async with a.client() as on_a, b.client() as on_b, b.client("k-bob") as bob:
        sid = (await on_a.post("/api/sessions", json={})).json()["session_id"]
        async with on_a.stream("POST", f"/api/sessions/{sid}/messages", json={"content": "go"}) as run:
            reader = Reader(run)
            await reader.events(3)
            stranger = await bob.post(f"/api/sessions/{sid}/cancel")
            cancelled = await on_b.post(f"/api/sessions/{sid}/cancel")
            events = await reader.events()
        status = (await on_b.get(f"/api/sessions/{sid}")).json()["status"]
    assert stranger.status_code == 404
    assert cancelled.json() == {"cancelled": True}
    assert events[-1][1]["reason"] == "cancelled"  # not `no_calls`: it stopped before its 3 s of streaming
    assert status == "cancelled"


async def test_a_keys_rate_limit_holds_across_workers(
    postgres_url: str, workers: Callable[..., Worker]
) -> None:
    a, b = workers(postgres_url, rate=4), workers(postgres_url, rate=4)
    async with a.client() as on_a, b.client() as on_b, b.client("k-bob") as bob:
        codes = [
            (await on_a.get("/api/agents")).status_code,
            (await on_b.get("/api/agents")).status_code,
            (await on_a.get("/api/agents")).status_code,
            (await on_b.get("/api/agents")).status_code,
            (await on_a.get("/api/agents")).status_code,
            (await on_b.get("/api/agents")).status_code,
        ]
        others = (await bob.get("/api/agents")).status_code
    assert codes == [200, 200, 200, 200, 429, 429]
    assert others == 200


async def test_a_graceful_shutdown_cancels_runs_cleanly_and_another_worker_resumes_the_session(
    postgres_url: str, workers: Callable[..., Worker]
) -> None:
    a, b = workers(postgres_url), workers(postgres_url)
    async with a.client() as on_a, b.client() as on_b:
        sid = (await on_a.post("/api/sessions", json={})).json()["session_id"]
        async with on_a.stream("POST", f"/api/sessions/{sid}/messages", json={"content": "go"}) as run:
            reader = Reader(run)
            await reader.events(3)
            a.process.send_signal(signal.SIGTERM)
            events = await reader.events()
        code = await asyncio.to_thread(a.process.wait, 20)
        status = (await on_b.get(f"/api/sessions/{sid}")).json()["status"]
        async with on_b.stream("POST", f"/api/sessions/{sid}/messages", json={"content": "again"}) as resumed:
            after = await read_events(resumed)
    assert code == -signal.SIGTERM  # uvicorn re-raises the signal once its graceful shutdown is done
    assert [e["event"] for _, e in events][-2:] == ["error", "on_chain_end"]
    assert events[-1][1]["reason"] == "cancelled"
    assert status == "cancelled"
    assert after[-1][1]["event"] == "on_chain_end"
    assert after[-1][1]["reason"] == "no_calls"


async def test_at_shutdown_an_ndjson_stream_also_ends_with_its_cancelled_runs_last_events(
    postgres_url: str, workers: Callable[..., Worker]
) -> None:
    a = workers(postgres_url)
    async with a.client() as on_a:
        sid = (await on_a.post("/api/sessions", json={})).json()["session_id"]
        headers = {"Accept": "application/x-ndjson"}
        async with on_a.stream(
            "POST", f"/api/sessions/{sid}/messages", json={"content": "go"}, headers=headers
        ) as run:
            lines = run.aiter_lines()
            await anext(lines)
            a.process.send_signal(signal.SIGTERM)
            events = [json.loads(line) async for line in lines]
    assert [e["event"] for e in events][-2:] == ["error", "on_chain_end"]
    assert events[-1]["reason"] == "cancelled"
