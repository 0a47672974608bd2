"""MCP servers configured in `tether serve`'s agent config, run as real processes: opened with the app
(on its event loop) and stopped with it, and called by a served agent through the agent API."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
import yaml

from tether.models import Model, ScriptedModel
from tether.serve import ServeConfig, create_app, load_config

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).with_name("sdk_server.py")
Listening = Callable[..., str]  # the `listening` fixture (conftest.py): starts a server, returns its URL
Alive = Callable[[int], bool]


def config_file(folder: Path, *tools: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    agent = {"name": "calc", "model": "openai:scripted", "dialect": "hermes", "tools": list(tools)}
    path = folder / "agents.yaml"
    path.write_text(yaml.safe_dump({"agents": [agent]}))
    return path


def mcp_tool(**config: Any) -> dict[str, Any]:
    return {"toolType": "mcp", "toolName": "calc", "config": config}


def script(monkeypatch: pytest.MonkeyPatch, *turns: str) -> ScriptedModel:
    model = ScriptedModel(list(turns))

    def fake_model(name: str, *, base_url: str | None = None, native_tools: bool = True) -> Model:
        return model

    monkeypatch.setattr("tether.serve._agents.model_from_name", fake_model)
    return model


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


async def ask(config: ServeConfig, content: str) -> str:
    """One message to the config's agent through the agent API, the app started and stopped around it."""
    app = create_app(config)
    async with app.router.lifespan_context(app):  # as uvicorn starts and stops it
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://tether.test") as c:
            created = await c.post("/api/sessions", json={"agent": "calc"})
            assert created.status_code == 201, created.text
            sid = created.json()["session_id"]
            answer = await c.post(f"/api/sessions/{sid}/messages", json={"content": content})
            assert answer.status_code == 200, answer.text
            return answer.text


def loaded(path: Path, tmp_path: Path) -> ServeConfig:
    return load_config(path, database=f"sqlite:///{tmp_path / 'serve.db'}")


async def test_a_command_server_runs_in_the_config_files_folder_with_its_env_and_stops_with_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alive: Alive
) -> None:
    folder = tmp_path / "deploy"
    command = [sys.executable, str(SERVER), "stdio", "pids.txt"]  # the pid file: relative to the folder
    path = config_file(
        folder, mcp_tool(command=command, env={"TETHER_TEST_MARK": "from-config"}, prefix="calc")
    )
    model = script(monkeypatch, call("calc.where"), call("calc.add", a=2, b=40), "42.")
    stream = await ask(loaded(path, tmp_path), "Where are you, and what is 2 + 40?")
    assert "calc.add" in model.requests[0].system  # the server's tools, under the config's prefix
    assert json.dumps({"cwd": str(folder.resolve()), "mark": "from-config"}) in stream.replace('\\"', '"')
    assert '\\"total\\": 42' in stream or '"total": 42' in stream
    pids = (folder / "pids.txt").read_text().split()
    assert len(pids) == 1
    assert not alive(int(pids[0]))  # the app's shutdown stopped it: no server left behind


@pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning"
)  # the SDK's SSE client's socket
@pytest.mark.parametrize(("transport", "path"), [("http", "/mcp"), ("sse", "/sse")])
async def test_url_servers_over_streamable_http_and_sse(
    transport: str, path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listening: Listening
) -> None:
    served = "streamable-http" if transport == "http" else "sse"
    url = listening([sys.executable, str(SERVER), served]) + path
    config = config_file(tmp_path, mcp_tool(url=url, transport=transport))
    script(monkeypatch, call("add", a=1, b=2), "3.")
    stream = await ask(loaded(config, tmp_path), "1 + 2?")
    assert '\\"total\\": 3' in stream or '"total": 3' in stream


CLOCK = """
from tether.tools import tool


@tool(side_effects="none", scopes=["clock.read"])
def now() -> str:
    return "noon"
"""


async def test_headers_reach_a_server_that_requires_a_bearer_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listening: Listening
) -> None:
    (tmp_path / "clock.py").write_text(CLOCK)
    url = listening(
        [sys.executable, "-m", "tether", "mcp", "serve", "clock.py", "--http", "127.0.0.1:0"],
        cwd=tmp_path,
        env={**os.environ, "TETHER_MCP_TOKENS": "tok-1=ci:clock.read"},
    )
    signed = config_file(tmp_path / "signed", mcp_tool(url=url, headers={"Authorization": "Bearer tok-1"}))
    script(monkeypatch, call("now"), "Noon.")
    assert "noon" in await ask(loaded(signed, tmp_path), "What time is it?")
    unsigned = config_file(tmp_path / "unsigned", mcp_tool(url=url))
    with pytest.raises(Exception, match="did not start"):  # 401 without the header: the app does not start
        await ask(loaded(unsigned, tmp_path), "What time is it?")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"command": "x", "url": "http://h/mcp"}, "exactly one of config.command or config.url"),
        ({"command": "x", "headers": {"A": "b"}}, "a `command` takes `env`"),
        ({"url": "http://h/mcp", "env": {"A": "b"}}, "a `url` takes `headers`"),
        ({"url": "http://h/mcp", "transport": "stdio"}, "transport"),
        ({"url": "h:8000/mcp"}, "http:// or https://"),
        ({"command": "x", "port": 1}, "port"),
    ],
)
def test_a_bad_mcp_config_is_a_clear_error_naming_the_tool(
    config: dict[str, Any], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tether.exceptions import UserError

    script(monkeypatch, "unused")
    with pytest.raises(UserError, match=r"tools\[0\] \(calc\)") as raised:
        load_config(config_file(tmp_path, mcp_tool(**config)))
    assert message in str(raised.value)
