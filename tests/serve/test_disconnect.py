"""Over a real socket: a client that drops its stream and comes back within the grace period loses nothing;
one that does not come back has its run cancelled, leaving the session ready for the next message."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from .conftest import Worker

pytestmark = pytest.mark.anyio


class Reader:
    """Reads an SSE response a few events at a time."""

    def __init__(self, response: httpx.Response):
        self.lines = response.aiter_lines()
        self.seq = 0

    async def events(self, count: int | None = None) -> list[tuple[int, dict[str, Any]]]:
        """`(seq, event)`: the next `count`, or all until the stream ends."""
        events: list[tuple[int, dict[str, Any]]] = []
        async for line in self.lines:
            if line.startswith("id: "):
                self.seq = int(line[4:])
            elif line.startswith("data: "):
                events.append((self.seq, json.loads(line[6:])))
                if count is not None and len(events) >= count:
                    break
        return events


async def read_events(response: httpx.Response, count: int | None = None) -> list[tuple[int, dict[str, Any]]]:
    """`(seq, event)` from an SSE response: `count` of them, or all until the stream ends."""
    events: list[tuple[int, dict[str, Any]]] = []
    seq = 0
    async for line in response.aiter_lines():
        if line.startswith("id: "):
            seq = int(line[4:])
        elif line.startswith("data: "):
            events.append((seq, json.loads(line[6:])))
            if count is not None and len(events) >= count:
                break
    return events


async def test_a_reconnect_within_the_grace_period_replays_the_missed_events_and_the_run_completes(
    tmp_path: Path, workers: Callable[..., Worker]
) -> None:
    worker = workers(f"sqlite:///{tmp_path / 'db.sqlite'}", grace_s=5)
    async with worker.client() as c:
        sid = (await c.post("/api/sessions", json={})).json()["session_id"]
        async with c.stream("POST", f"/api/sessions/{sid}/messages", json={"content": "go"}) as first:
            before = await read_events(first, 5)
        # the connection is closed; the run goes on without a reader
        await asyncio.sleep(0.5)
        async with c.stream(
            "GET", f"/api/sessions/{sid}/events", headers={"Last-Event-ID": str(before[-1][0])}
        ) as again:
            after = await read_events(again)
    seqs = [s for s, _ in before + after]
    assert seqs == list(range(1, len(seqs) + 1))  # nothing lost, nothing repeated
    assert after[-1][1]["event"] == "on_chain_end"
    assert after[-1][1]["reason"] == "no_calls"
    text = "".join(e["data"] for _, e in before + after if e["event"] == "on_chat_model_stream")
    assert text == " ".join(f"w{i}" for i in range(60))


async def test_a_client_that_does_not_come_back_has_its_run_cancelled_after_the_grace_period(
    tmp_path: Path, workers: Callable[..., Worker]
) -> None:
    worker = workers(f"sqlite:///{tmp_path / 'db.sqlite'}", grace_s=0.3)
    async with worker.client() as c:
        sid = (await c.post("/api/sessions", json={})).json()["session_id"]
        async with c.stream("POST", f"/api/sessions/{sid}/messages", json={"content": "go"}) as first:
            await read_events(first, 3)
        await asyncio.sleep(1.5)  # the run alone would take 3 s
        status = (await c.get(f"/api/sessions/{sid}")).json()["status"]
        async with c.stream("GET", f"/api/sessions/{sid}/events", params={"after": 0}) as replay:
            events = await read_events(replay)
    assert status == "cancelled"
    assert [e["event"] for _, e in events][-2:] == ["error", "on_chain_end"]
    assert events[-1][1]["reason"] == "cancelled"
