"""Config files: several agents, each checked against agent_config.v2, and errors that name file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.exceptions import UserError
from tether.serve import ServeConfig, ServedAgent, default_agent, hash_key, load_config

from .conftest import client, new_session, sse_events

TOOLS = '''
from tether import tool

@tool(side_effects="none")
def shout(text: str) -> str:
    """Shout."""
    return text.upper()
'''


def write(tmp_path: Path, text: str, name: str = "agents.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_config_file_serves_several_named_agents_with_their_tools(tmp_path: Path) -> None:
    (tmp_path / "shout.py").write_text(TOOLS, encoding="utf-8")
    path = write(
        tmp_path,
        f"""
agents:
  - name: files
    description: Reads files.
    model: tether:demo
    dialect: hermes
    termination: no_calls
    mode: act_first
    tools:
      - {{toolType: fs, toolName: files, config: {{roots: ["."], readOnly: true}}}}
    limits: {{maxIterations: 4, maxToolCalls: 9}}
    policy: {{max_concurrency: 2}}
  - name: local
    model: openai:qwen3
    baseUrl: http://127.0.0.1:9/v1
    dialect: qwen3_coder_xml
    systemPrompt: Be brief.
    tools:
      - {{toolType: file, toolName: shout, config: {{path: shout.py}}}}
keys:
  - {{hash: "{hash_key("k")}", principal: ci, scopes: [a, b]}}
cors: [https://app.example]
limits: {{maxRequestBytes: 5000, requestsPerMinute: 30, disconnectGraceS: 2}}
""",
    )
    config = load_config(path)
    assert [a.name for a in config.agents] == ["files", "local"]
    assert config.agents[0].description == "Reads files."
    assert config.database == f"sqlite:///{tmp_path.resolve() / 'tether-serve.db'}"
    assert [(k.principal, k.scopes) for k in config.keys] == [("ci", frozenset({"a", "b"}))]
    assert (config.max_request_bytes, config.disconnect_grace_s, list(config.cors_origins)) == (
        5000, 2, ["https://app.example"],
    )  # fmt: skip
    assert config.rate_limit is not None
    assert config.rate_limit.calls == 30
    from tether.execution import Principal
    from tether.store import MemoryJournal

    files = config.agents[0].build(Principal("u"), MemoryJournal())
    assert sorted(files.toolset.tools()) == ["fs.ls", "fs.read"]
    assert (files.limits.max_iterations, files.limits.max_tool_calls, files.mode) == (4, 9, "act_first")
    assert files.executor.policy.max_concurrency == 2
    assert files.limits.max_wall_time_s == 600  # a stuck upstream does not hold a stream for ever
    local = config.agents[1].build(Principal("u"), MemoryJournal())
    assert (local.dialect, local.system_prompt, sorted(local.toolset.tools())) == (
        "qwen3_coder_xml",
        "Be brief.",
        ["shout"],
    )


def test_json_config_and_the_db_option_override(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps({"agents": [{"name": "d", "model": "tether:demo"}]}), "agents.json")
    assert load_config(path, database="sqlite:///elsewhere.db").database == "sqlite:///elsewhere.db"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("agents: []", "agents: List should have at least 1 item"),
        ("agent: []", "agents.yaml: agent: unknown field 'agent'; did you mean 'agents'?"),
        ("agents:\n  - {name: a}", "agents[0].model: Field required"),
        (
            "agents:\n  - {name: a, model: tether:demo, termnation: x}",
            "agents[0].termnation: unknown field 'termnation'; did you mean 'termination'?",
        ),
        (
            "agents:\n  - {name: a, model: tether:demo, termination: forever}",
            "agents[0].termination: Input should be",
        ),
        ("agents:\n  - {name: a, model: tether:demo, mode: shy}", "agents[0].mode: Input should be"),
        (
            "agents:\n  - {name: a, model: tether:demo, policy: {max_concurency: 2}}",
            "agents[0].policy.max_concurency: unknown field 'max_concurency'; did you mean 'max_concurrency'?",
        ),
        (
            "agents:\n  - {name: a, model: tether:demo, limits: {maxIterations: 0}}",
            "agents[0].limits.maxIterations",
        ),
        (
            "agents:\n  - {name: a, model: tether:demo, tools: [{toolType: vectorSearch, toolName: s}]}",
            "agents[0] (a): tools[0] (s): toolType 'vectorSearch' is not a tool source",
        ),
        (
            "agents:\n  - {name: a, model: tether:demo, tools: [{toolType: fs, toolName: f, config: {root: x}}]}",
            "tools[0] (f).config.root: unknown field 'root'; did you mean 'roots'?",
        ),
        (
            "agents:\n  - {name: a, model: tether:demo, tools: [{toolType: file, toolName: f, config: {path: nope.py}}]}",
            "agents[0] (a): tools[0] (f): ",
        ),
        ("agents:\n  - {name: a, model: nowhere:x}", "agents[0] (a): Unknown model 'nowhere:x'"),
        (
            "agents:\n  - {name: a, model: tether:demo}\n  - {name: a, model: tether:demo}",
            "agent names must be unique; repeated: a",
        ),
        (
            "agents:\n  - {name: a, model: tether:demo}\nkeys: [{hash: plain, principal: p}]",
            "keys.0.hash: String should match",
        ),
        ("agents: [", "is not valid YAML"),
        ("- just a list", "the config must be a mapping"),
    ],
)
def test_a_bad_config_is_a_user_error_naming_the_file_and_the_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(UserError) as raised:
        load_config(path)
    assert str(raised.value).startswith(str(path))
    assert message in str(raised.value)


def test_a_missing_config_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"Cannot read the serve config .*missing\.yaml"):
        load_config(tmp_path / "missing.yaml")


def test_a_served_config_needs_agents_with_unique_names() -> None:
    with pytest.raises(UserError, match="empty"):
        ServeConfig(agents=[])
    agent = ServedAgent("same", lambda p, j: default_agent(Path()).build(p, j))
    with pytest.raises(UserError, match="repeated: same"):
        ServeConfig(agents=[agent, agent])


@pytest.mark.anyio
async def test_the_embedded_default_agent_works_offline_with_real_tools(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    from tether.serve import create_app

    app = create_app(
        ServeConfig(agents=[default_agent(tmp_path)], database=f"sqlite:///{tmp_path / 'db.sqlite'}")
    )
    async with client(app) as c:
        sid = await new_session(c)
        events = sse_events(
            (await c.post(f"/api/sessions/{sid}/messages", json={"content": "what is here?"})).text
        )
    listing = next(d["envelope"] for _, n, d in events if n == "on_tool_end")
    assert listing["ok"] is True
    assert "notes.txt" in json.dumps(listing["data"])
    assert "notes.txt" in events[-1][2]["data"]
