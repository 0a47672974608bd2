"""A new user's first hour with `tether serve`, written down: the mistakes people make on the way in, and
what the server must answer to each (a clear error naming the fix, never a 500 or a traceback)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import openai
import pytest
import uvicorn
from fastapi import FastAPI
from starlette.routing import Mount
from typer.testing import CliRunner

from tether.cli import app as cli
from tether.exceptions import SandboxUnavailable
from tether.serve import ServeConfig, Upstream, openai_router

from .conftest import call, client, new_session, scripted, sse_events
from .openai_fakes import FakeUpstream, free_socket, running, url_of

runner = CliRunner()


def serve_config(tmp_path: Path, agent: str, top: str = "") -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(f"agents:\n  - {agent}\n{top}", encoding="utf-8")
    return path


def one_line_exit_2(result: Any, *expected: str) -> str:
    output = " ".join(result.output.split())  # the console wraps long lines on a narrow terminal
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.output.startswith("error: "), result.output
    for text in expected:
        assert text in output, output
    return output


# -------------------------------------------------------------------------------------- starting up


def test_a_typo_in_the_config_names_the_file_the_field_path_and_the_field_meant(tmp_path: Path) -> None:
    path = serve_config(tmp_path, "{name: a, model: tether:demo, limits: {maxIteration: 4}}")
    result = runner.invoke(cli, ["serve", str(path)])
    one_line_exit_2(
        result,
        f"{path}: agents[0].limits.maxIteration: unknown field 'maxIteration'; did you mean 'maxIterations'?",
    )


def test_a_typo_at_the_top_of_the_config_is_named_too(tmp_path: Path) -> None:
    path = serve_config(tmp_path, "{name: a, model: tether:demo}", "upstream: {}\n")
    one_line_exit_2(
        runner.invoke(cli, ["serve", str(path)]), f"{path}: upstream: unknown field", "'upstreams'"
    )


def test_an_unknown_dialect_fails_at_start_not_at_the_first_request(tmp_path: Path) -> None:
    path = serve_config(tmp_path, "{name: a, model: tether:demo, dialect: qwen3_xml}")
    one_line_exit_2(
        runner.invoke(cli, ["serve", str(path)]),
        f"{path}: agents[0].dialect: no dialect 'qwen3_xml'; did you mean",
        "Leave `dialect` out",
    )


def test_an_upstreams_unknown_dialect_fails_at_start(tmp_path: Path) -> None:
    path = serve_config(
        tmp_path,
        "{name: a, model: tether:demo}",
        "upstreams: {m: {baseUrl: 'http://x/v1', model: m, dialect: hermez}}\n",
    )
    one_line_exit_2(runner.invoke(cli, ["serve", str(path)]), "upstreams.m.dialect: no dialect 'hermez'")


def test_an_empty_openai_api_key_is_a_clear_error_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    path = serve_config(tmp_path, "{name: a, model: openai:gpt-4o-mini}")
    one_line_exit_2(
        runner.invoke(cli, ["serve", str(path)]), "agents[0] (a):", "OPENAI_API_KEY is not set (or empty)"
    )


def test_an_upstream_refusing_a_missing_key_names_the_empty_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_KEY", "")
    fake = FakeUpstream(pieces=["hi"], mode="key")
    sock = free_socket()
    upstream = Upstream(base_url=f"{url_of(sock)}/up/v1", model="m", api_key_env="VLLM_KEY")
    app = FastAPI()
    app.include_router(openai_router({"m": upstream}))
    app.router.routes.append(Mount("/up", fake.app()))
    with running(app, sock, lifespan="on"):  # the router's client closes its pooled connections
        client = openai.OpenAI(base_url=f"{url_of(sock)}/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.APIStatusError) as raised:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 502
    error: Any = raised.value.body
    assert "the environment variable VLLM_KEY is not set, or empty" in error["message"]
    assert error["suggestion"] == "Export VLLM_KEY where tether serve runs, then restart it."


def test_a_host_without_a_sandbox_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_bwrap(path: Path, *, database: str | None = None) -> ServeConfig:
        raise SandboxUnavailable("bubblewrap is missing: apt-get install bubblewrap")

    monkeypatch.setattr("tether.serve.load_config", no_bwrap)
    path = serve_config(tmp_path, "{name: a, model: tether:demo}")
    output = one_line_exit_2(runner.invoke(cli, ["serve", str(path)]), "apt-get install bubblewrap")
    assert "bug" not in output


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = runner.invoke(cli, ["serve", "--port", str(port), "--db", f"sqlite:///{tmp_path / 'x.db'}"])
    one_line_exit_2(result, f"cannot listen on 127.0.0.1:{port}", "--port (0: any free port)")


def test_port_0_serves_on_a_free_port_and_says_which(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    command = [sys.executable, "-m", "tether", "serve", "--port", "0"]
    server = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline().decode()
        found = re.search(r"at http://127\.0\.0\.1:(\d+)/", first)
        assert found, first
        port = int(found.group(1))
        assert port != 0
        agents = None
        deadline = time.monotonic() + 60
        while agents is None and time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/agents", timeout=2) as response:
                    agents = json.loads(response.read())
            except OSError:
                time.sleep(0.2)
        assert agents is not None
        assert agents[0]["name"] == "demo"
    finally:
        server.terminate()
        server.communicate(timeout=20)


# ------------------------------------------------------------------------------------- first requests


@pytest.mark.anyio
@pytest.mark.parametrize("route", ["/api/sessions/{sid}/messages", "/v1/chat/completions", "/api/sessions"])
async def test_a_deeply_nested_json_body_is_a_400_not_a_500(
    make_app: Callable[..., FastAPI], route: str
) -> None:
    app = make_app(scripted("a", ["hi"]))
    body = '{"content": ' + "[" * 100_000 + "]" * 100_000 + "}"
    async with client(app) as c:
        sid = await new_session(c)
        response = await c.post(
            route.format(sid=sid), content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == 400, response.text
    assert "Traceback" not in response.text
    assert "JSON" in response.json()["error"]["suggestion"]


@pytest.mark.anyio
async def test_a_body_that_is_not_json_says_so_and_how_to_send_one(make_app: Callable[..., FastAPI]) -> None:
    async with client(make_app(scripted("a", ["hi"]))) as c:
        sid = await new_session(c)
        response = await c.post(
            f"/api/sessions/{sid}/messages",
            content=b"content=hi",
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["message"].startswith("body: not valid JSON (Expecting value at character 0)")
    assert '{"content": "hello"}' in error["suggestion"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "last_event_id", [b"abc", b"-1", "²".encode("latin-1"), b"9" * 5000, b"1.5", b"\xd9\xa3"]
)
async def test_a_bad_last_event_id_is_a_400_naming_the_fix(
    make_app: Callable[..., FastAPI], last_event_id: bytes
) -> None:
    app = make_app(scripted("a", ["hi"]))
    async with client(app) as c:
        sid = await new_session(c)
        await c.post(f"/api/sessions/{sid}/messages", json={"content": "hi"})
        response = await c.get(f"/api/sessions/{sid}/events", headers={b"last-event-id": last_event_id})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "BAD_LAST_EVENT_ID"
    assert "Send the `id` of the last event" in response.json()["error"]["suggestion"]


@pytest.mark.anyio
async def test_events_after_the_runs_last_event_are_a_204_so_an_event_source_stops_reconnecting(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(scripted("a", ["hi"]))
    async with client(app) as c:
        sid = await new_session(c)
        events = sse_events((await c.post(f"/api/sessions/{sid}/messages", json={"content": "hi"})).text)
        last = events[-1][0]
        after_end = await c.get(f"/api/sessions/{sid}/events", headers={"last-event-id": str(last)})
        beyond = await c.get(f"/api/sessions/{sid}/events?after={last + 100}")
        replay = await c.get(f"/api/sessions/{sid}/events", headers={"last-event-id": str(last - 1)})
    assert (after_end.status_code, after_end.content) == (204, b"")
    assert beyond.status_code == 204
    assert [e for _, e, _ in sse_events(replay.text)] == ["on_chain_end"]


# ------------------------------------------------------------------------------ NUL bytes, PostgreSQL


@pytest.mark.anyio
async def test_nul_bytes_in_a_message_on_postgresql_are_stored_safely_and_read_back(
    make_app: Callable[..., FastAPI], postgres_url: str
) -> None:
    text = "before\x00after"
    app = make_app(
        scripted("a", [call("echo", text="x\x00y"), "done\x00."], tools=[_echo()]), database=postgres_url
    )
    async with client(app) as c:
        sid = await new_session(c)
        response = await c.post(f"/api/sessions/{sid}/messages", json={"content": text})
        assert response.status_code == 200
        events = sse_events(response.text)
        history = await c.get(f"/api/sessions/{sid}/messages")
        listed = await c.get("/api/sessions")
    assert events[-1][1] == "on_chain_end"
    assert events[-1][2]["reason"] != "error", events
    assert history.status_code == 200
    contents = [m["content"] for m in history.json()]
    assert contents == [text, "done\x00."]
    # the journal keeps tool results `storable` (a NUL becomes U+FFFD); the conversation keeps it as sent
    assert history.json()[1]["toolCalls"][0]["output"] == "X\ufffdY"
    assert listed.status_code == 200
    assert listed.json()[0]["title"] == "before\ufffdafter"


@pytest.mark.anyio
async def test_a_lone_surrogate_in_a_message_on_postgresql_is_no_500(
    make_app: Callable[..., FastAPI], postgres_url: str
) -> None:
    app = make_app(scripted("a", ["ok"]), database=postgres_url)
    body = b'{"content": "half a pair: \\ud800 here"}'
    async with client(app) as c:
        sid = await new_session(c)
        response = await c.post(
            f"/api/sessions/{sid}/messages", content=body, headers={"content-type": "application/json"}
        )
        history = await c.get(f"/api/sessions/{sid}/messages")
    assert response.status_code < 500, response.text
    assert history.status_code == 200
    if response.status_code == 200:
        assert sse_events(response.text)[-1][2]["reason"] != "error"


def _echo() -> Any:
    from tether.tools import tool

    @tool(side_effects="none")
    def echo(text: str) -> str:
        """Shout the text back."""
        return text.upper()

    return echo


# ---------------------------------------------------------------------------- 1,000 SSE connections


@pytest.mark.anyio
async def test_a_thousand_sse_connects_and_disconnects_leave_nothing_behind(
    make_app: Callable[..., FastAPI],
) -> None:
    started = asyncio.Event()

    async def never_ending(request: Any) -> str:
        started.set()
        await asyncio.sleep(3600)
        return "never"

    from tether.models import FunctionModel

    app = make_app(scripted("a", [], model=lambda: FunctionModel(never_ending)), disconnect_grace_s=600)
    served = app.state.served
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn offers no event to wait on
        await asyncio.sleep(0.01)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, timeout=10) as c:
            sid = await new_session(c)
            async with c.stream("POST", f"/api/sessions/{sid}/messages", json={"content": "hi"}) as first:
                assert first.status_code == 200
                await started.wait()
                buffer = served.runs.buffers[sid]
                baseline = len(asyncio.all_tasks())

                async def connect_and_leave() -> None:
                    async with c.stream("GET", f"/api/sessions/{sid}/events") as response:
                        assert response.status_code == 200
                        async for line in response.aiter_lines():
                            if line.startswith("data:"):
                                break  # the first event replayed: hang up

                for _ in range(50):
                    await asyncio.gather(*(connect_and_leave() for _ in range(20)))
                for _ in range(200):  # the server notices the last disconnects
                    if buffer.watchers == 1 and len(asyncio.all_tasks()) <= baseline:
                        break
                    await asyncio.sleep(0.05)
                assert buffer.watchers == 1  # the first request's stream, still open
                assert len(asyncio.all_tasks()) <= baseline
                assert not buffer.done  # nobody's leaving cancelled the run
            await c.post(f"/api/sessions/{sid}/cancel")
    finally:
        server.should_exit = True
        await serving
    assert json.dumps(buffer.end or {}).count("cancelled") >= 1
