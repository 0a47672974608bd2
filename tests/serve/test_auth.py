"""Keys, tenants and limits: a key is stored only hashed and stands for one principal, whose scopes the
executor checks; no principal reaches another's sessions; CORS is off unless configured; bodies and request
rates are limited."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi import FastAPI

from tether import tool
from tether.serve import ApiKey, hash_key
from tether.types import RateLimit

from .conftest import call, client, new_session, scripted, sse_events

pytestmark = pytest.mark.anyio

ALICE, BOB = "alice-key-0123456789abcdef", "bob-key-0123456789abcdef"
KEYS = [ApiKey(hash_key(ALICE), "alice", frozenset({"reports.read"})), ApiKey(hash_key(BOB), "bob")]


@tool(side_effects="none", scopes=["reports.read"])
def report() -> str:
    """The quarterly report."""
    return "Q3: up"


def test_keys_are_configured_as_sha256_hashes_only() -> None:
    assert hash_key(ALICE).startswith("sha256:")
    assert ALICE not in hash_key(ALICE)


async def test_without_a_valid_key_every_route_answers_401(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(scripted("a", ["hi"]), keys=KEYS)
    async with (
        client(app) as anonymous,
        client(app, "wrong") as wrong,
        client(app, hash_key(ALICE)) as by_hash,
    ):
        for c in (anonymous, wrong, by_hash):
            for response in (await c.get("/api/agents"), await c.post("/api/sessions", json={})):
                assert response.status_code == 401
                assert response.json()["error"]["code"] == "UNAUTHORIZED"
                assert response.headers["www-authenticate"] == "Bearer"


async def test_no_principal_can_read_follow_answer_resume_or_cancel_anothers_session(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(scripted("a", [call("report"), "done"], [report]), keys=KEYS)
    async with client(app, ALICE) as alice, client(app, BOB) as bob:
        sid = await new_session(alice)
        await alice.post(f"/api/sessions/{sid}/messages", json={"content": "secret plans"})
        attempts = [
            await bob.get(f"/api/sessions/{sid}"),
            await bob.get(f"/api/sessions/{sid}/messages"),
            await bob.get(f"/api/sessions/{sid}/events", params={"after": 0}),
            await bob.post(f"/api/sessions/{sid}/messages", json={"content": "continue"}),
            await bob.post(f"/api/sessions/{sid}/needs", json={"call_id": "call_0", "values": {"x": 1}}),
            await bob.post(f"/api/sessions/{sid}/cancel"),
        ]
        bobs = (await bob.get("/api/sessions")).json()
        alices = (await alice.get("/api/sessions")).json()
        missing = await bob.get("/api/sessions/0123456789abcdef0123456789abcdef")
    for response in attempts:
        assert response.status_code == 404, response.text
        assert response.json() == missing.json() | {
            "error": {**missing.json()["error"], "message": f"No session {sid!r}."}
        }  # exactly as a session that does not exist: no hint that it does
        assert "secret" not in response.text
    assert bobs == []
    assert [s["session_id"] for s in alices] == [sid]


async def test_the_keys_scopes_reach_the_executors_scope_guard(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(scripted("a", [call("report"), "done"], [report]), keys=KEYS)
    envelopes = {}
    for name, key in (("alice", ALICE), ("bob", BOB)):
        async with client(app, key) as c:
            sid = await new_session(c)
            events = sse_events(
                (await c.post(f"/api/sessions/{sid}/messages", json={"content": "report"})).text
            )
            envelopes[name] = next(d["envelope"] for _, n, d in events if n == "on_tool_end")
    assert envelopes["alice"] == {"ok": True, "data": "Q3: up"}
    assert envelopes["bob"]["error"]["code"] == "SCOPES_MISSING"


async def test_a_key_over_its_rate_gets_429_with_retry_after_and_other_keys_do_not(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(scripted("a", ["hi"]), keys=KEYS, rate_limit=RateLimit(calls=3, per_seconds=60))
    async with client(app, ALICE) as alice, client(app, BOB) as bob:
        codes = [(await alice.get("/api/agents")).status_code for _ in range(4)]
        limited = await alice.get("/api/agents")
        other = await bob.get("/api/agents")
    assert codes == [200, 200, 200, 429]
    assert limited.json()["error"]["code"] == "RATE_LIMITED"
    assert int(limited.headers["retry-after"]) >= 1
    assert other.status_code == 200


async def test_the_local_user_of_a_keyless_server_is_not_rate_limited(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(scripted("a", ["hi"]), rate_limit=RateLimit(calls=3, per_seconds=60))
    async with client(app) as c:
        codes = {(await c.get("/api/agents")).status_code for _ in range(6)}
    assert codes == {200}


async def test_bodies_over_the_limit_get_413_whether_declared_or_streamed(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(scripted("a", ["hi"]), max_request_bytes=1000)

    async def chunks():  # no Content-Length: the limit applies as the body streams in
        for _ in range(10):
            yield b"x" * 200

    async with client(app) as c:
        sid = await new_session(c)
        declared = await c.post(f"/api/sessions/{sid}/messages", json={"content": "x" * 2000})
        streamed = await c.post(
            f"/api/sessions/{sid}/messages", content=chunks(), headers={"content-type": "application/json"}
        )
        small = await c.post(f"/api/sessions/{sid}/messages", json={"content": "hello"})
    assert declared.status_code == streamed.status_code == 413
    assert declared.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert small.status_code == 200


async def test_cors_is_off_unless_origins_are_configured(make_app: Callable[..., FastAPI]) -> None:
    preflight = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    async with client(make_app(scripted("a", ["hi"]))) as c:
        closed = await c.options("/api/sessions", headers=preflight)
        simple = await c.get("/api/agents", headers={"Origin": "https://evil.example"})
    async with client(make_app(scripted("a", ["hi"]), cors_origins=["https://app.example"])) as c:
        allowed = await c.options("/api/sessions", headers={**preflight, "Origin": "https://app.example"})
        refused = await c.options("/api/sessions", headers=preflight)
    assert "access-control-allow-origin" not in closed.headers
    assert "access-control-allow-origin" not in simple.headers
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert "access-control-allow-origin" not in refused.headers
