"""`agent_config.v3` in a serve config: a planner and a responder on different models and servers, from
YAML; v2 objects still accepted; typos refused with the field meant."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from tether.exceptions import UserError
from tether.execution import Principal
from tether.serve import create_app, load_config
from tether.store import MemoryJournal
from tether.types import AgentConfig, AgentConfigV3

from .conftest import client, new_session, sse_events
from .openai_fakes import FakeUpstream, free_socket, running, url_of

SHOUT = '''
from tether import tool

@tool(side_effects="none")
def shout(text: str) -> str:
    """Shout."""
    return text.upper()
'''


class Upstreams:
    def __init__(self, url: str, planner: FakeUpstream, responder: FakeUpstream):
        self.url = url
        self.planner = planner
        self.responder = responder


@pytest.fixture
def upstreams() -> Iterator[Upstreams]:
    planner, responder = FakeUpstream(), FakeUpstream()
    sock = free_socket()
    app = Starlette(routes=[Mount("/planner", planner.app()), Mount("/responder", responder.app())])
    with running(app, sock):
        yield Upstreams(url_of(sock), planner, responder)


@pytest.mark.anyio
async def test_a_planner_and_a_responder_on_different_models_and_servers_work_from_yaml(
    tmp_path: Path, upstreams: Upstreams
) -> None:
    (tmp_path / "shout.py").write_text(SHOUT, encoding="utf-8")
    call = '<tool_call>\n{"name": "shout", "arguments": {"text": "hi"}}\n</tool_call>'
    upstreams.planner.script = [[call]]
    upstreams.planner.pieces = ["Planned."]
    upstreams.responder.pieces = ["The tool ", "shouted HI."]
    path = tmp_path / "agents.yaml"
    path.write_text(
        f"""
agents:
  - name: split
    model: openai:small-planner
    baseUrl: {upstreams.url}/planner/v1
    responder: {{model: "openai:big-writer", baseUrl: "{upstreams.url}/responder/v1"}}
    dialect: hermes
    mode: act_first
    policy: {{max_concurrency: 1}}
    tools:
      - {{toolType: file, toolName: shout, config: {{path: shout.py}}}}
""",
        encoding="utf-8",
    )
    app = create_app(load_config(path, database=f"sqlite:///{tmp_path / 'db.sqlite'}"))
    async with client(app) as c:
        sid = await new_session(c)
        events = sse_events(
            (await c.post(f"/api/sessions/{sid}/messages", json={"content": "shout hi"})).text
        )
        history = (await c.get(f"/api/sessions/{sid}/messages")).json()
    ended = next(d for _, n, d in events if n == "on_tool_end")
    assert ended["envelope"] == {"ok": True, "data": "HI"}
    assert [r["model"] for r in upstreams.planner.requests] == ["small-planner", "small-planner"]
    assert [r["model"] for r in upstreams.responder.requests] == ["big-writer"]
    reply = [m for m in json.loads(json.dumps(history)) if m["role"] == "assistant"][-1]
    assert reply["content"] == "The tool shouted HI."
    assert "Planned." not in json.dumps([d for _, n, d in events if n == "on_chat_model_stream"])


def test_a_responder_by_name_is_made_like_the_planner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agents:\n  - {name: p, model: openai:gpt-4o-mini, responder: openai:gpt-4o, mode: actionable_intent}\n",
        encoding="utf-8",
    )
    agent = load_config(path).agents[0].build(Principal("u"), MemoryJournal())
    assert (agent.model.name, agent.responder and agent.responder.name) == (
        "openai:gpt-4o-mini",
        "openai:gpt-4o",
    )
    assert agent.planner_backup is agent.responder  # either stands in for the other


def test_every_v2_object_is_a_v3_object_and_serves_unchanged() -> None:
    v2 = {
        "name": "a",
        "model": "tether:demo",
        "dialect": "hermes",
        "tools": [{"toolType": "fs", "toolName": "files"}],
        "limits": {"maxIterations": 3},
    }
    assert AgentConfigV3.model_validate(v2).model_dump(include=set(AgentConfig.model_fields)) == (
        AgentConfig.model_validate(v2).model_dump()
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{name: a, model: tether:demo, limits: {maxIteration: 6}}", "agents[0].limits.maxIteration: unknown field 'maxIteration'; did you mean 'maxIterations'?"),
        ("{name: a, model: tether:demo, tools: [{toolType: fs, toolName: f, descripton: x}]}", "agents[0].tools[0].descripton: unknown field 'descripton'; did you mean 'description'?"),
        ("{name: a, model: tether:demo, responder: {model: tether:demo, baseurl: x}}", "agents[0].responder.baseurl: unknown field 'baseurl'; did you mean 'baseUrl'?"),
        ("{name: a, model: tether:demo, systemPromt: hi}", "agents[0].systemPromt: unknown field 'systemPromt'; did you mean 'systemPrompt'?"),
        ("{name: a, model: tether:demo, dialect: hermez}", "agents[0].dialect: no dialect 'hermez'; did you mean 'hermes'?"),
        ("{name: a, model: tether:demo, responder: nowhere:x}", "agents[0] (a): responder: Unknown model 'nowhere:x'"),
    ],
)  # fmt: skip
def test_typos_and_unknown_names_fail_at_load_naming_file_field_and_the_fix(
    tmp_path: Path, entry: str, message: str
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(f"agents:\n  - {entry}\n", encoding="utf-8")
    with pytest.raises(UserError) as raised:
        load_config(path)
    assert str(raised.value).startswith(f"{path}: ")
    assert message in str(raised.value)


def test_the_perin_example_plans_and_responds_on_different_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tether.packs.perin", reason="the perin extra is not installed")
    monkeypatch.setenv("TETHER_JOURNAL_URL", f"sqlite:///{tmp_path / 'perin.db'}")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # models are made when the config is read, never called
    example = Path(__file__).parents[2] / "examples" / "perin" / "agent.yaml"
    agent = load_config(example).agents[0].build(Principal("local"), MemoryJournal())
    assert agent.model.name == "openai:gpt-4o-mini"
    assert agent.responder is not None
    assert agent.responder.name == "openai:gpt-4o"
    assert agent.executor.policy.require_principal
