"""The acceptance scenario through `tether serve`'s agent API: a session, messages streamed back as SSE,
each API key acting as its own network member."""

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed")

import httpx2 as httpx
from fastapi import FastAPI

from tether.models import Model, ScriptedModel
from tether.packs.perin import Network, perin_served_agent
from tether.serve import ApiKey, ServeConfig, create_app, hash_key

from . import openai_stream
from .conftest import NOW, tomorrow

pytestmark = pytest.mark.anyio

ASK = "Set a 30-minute meeting with Aviad tomorrow between 12:00-14:00 Israel time"
CALL = {
    "counterpart": "Aviad",
    "durationMins": 30,
    "startWindow": "2026-03-27T12:00:00",
    "endWindow": "2026-03-27T14:00:00",
    "tzHint": "Asia/Jerusalem",
}
SUMMARY = (
    "I proposed 12:00, 13:00, 13:15 and 13:30 tomorrow to Aviad and let him know. Which one should I book?"
)


def scripts(*runs: list[Any]) -> Callable[[], Model]:
    """A fresh scripted model for each run, playing the next run's turns."""
    remaining: Iterator[list[Any]] = iter(runs)
    return lambda: ScriptedModel(next(remaining), native_dialect="openai")


def sse(body: str) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            fields[name] = value
        if "data" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


@pytest.fixture
def network(tmp_path: Path) -> Iterator[Network]:
    network = Network(f"sqlite:///{tmp_path / 'perin.db'}", clock=lambda: NOW)
    network.add_user("Dana Levi", "dana@example.com", "Asia/Jerusalem", user_id="dana")
    network.add_user("Aviad Cohen", "aviad@example.com", "Asia/Jerusalem", user_id="aviad")
    network.add_user("Mallory", "mallory@example.com", "Europe/London", user_id="mallory")
    network.connect("dana", "aviad")
    network.add_busy("aviad", tomorrow(12, 30), tomorrow(13))
    yield network
    network.close()


def app(network: Network, planner: Callable[[], Model], responder: Callable[[], Model]) -> FastAPI:
    keys = [ApiKey(hash_key(f"k-{who}"), who) for who in ("dana", "aviad", "mallory")]
    agent = perin_served_agent(network, planner=planner, responder=responder)
    return create_app(ServeConfig(agents=[agent], database=network.journal.url, keys=keys, rate_limit=None))


async def say(served: FastAPI, key: str, content: str, session: str | None = None) -> tuple[str, list[Any]]:
    transport = httpx.ASGITransport(app=served)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://perin.test", headers=headers) as c:
        if session is None:
            created = await c.post("/api/sessions", json={"agent": "perin"})
            assert created.status_code == 201, created.text
            session = str(created.json()["session_id"])
        response = await c.post(f"/api/sessions/{session}/messages", json={"content": content})
    assert response.status_code == 200, response.text
    return session, sse(response.text)


async def test_the_scenario_runs_through_the_served_chat_api(network: Network) -> None:
    planner = scripts(
        [openai_stream.tool_call("network_schedule_meeting", CALL), openai_stream.text("Proposed.")]
    )
    responder = scripts([openai_stream.text(SUMMARY)])
    served = app(network, planner, responder)
    _, events = await say(served, "k-dana", ASK)
    names = [name for name, _ in events]
    assert names[0] == "on_chain_start"
    assert names[-1] == "on_chain_end"
    [end] = [data for name, data in events if name == "on_tool_end"]
    proposal = end["envelope"]["data"]
    assert [p["start"][11:16] for p in proposal["proposals"]] == ["12:00", "13:00", "13:15", "13:30"]
    # act first: the reply streams only after the tool finished
    first_text = names.index("on_chat_model_stream")
    assert first_text > names.index("on_tool_end")
    streamed = "".join(str(data["data"]) for name, data in events if name == "on_chat_model_stream")
    assert streamed == SUMMARY
    assert [n.kind for n in network.notifications("aviad")] == ["meeting_proposed"]


async def test_a_confirm_from_chat_books_both_calendars_and_mallory_cannot_take_over_the_session(
    network: Network,
) -> None:
    propose = [openai_stream.tool_call("network_schedule_meeting", CALL), openai_stream.text("Proposed.")]
    served_ids: list[str] = []

    def planner() -> Model:
        if not served_ids:
            return ScriptedModel(propose, native_dialect="openai")
        confirm = {"sessionId": served_ids[0], "selectionIndex": 0}
        return ScriptedModel(
            [openai_stream.tool_call("network_confirm_meeting", confirm), openai_stream.text("Done.")],
            native_dialect="openai",
        )

    responder = scripts(*([openai_stream.text("ok")] for _ in range(3)))
    served = app(network, planner, responder)
    session, events = await say(served, "k-dana", ASK)
    [end] = [data for name, data in events if name == "on_tool_end"]
    served_ids.append(end["envelope"]["data"]["sessionId"])
    # Mallory's own chat, told Dana's session id, cannot confirm it
    _, stolen = await say(served, "k-mallory", f"Confirm session {served_ids[0]}")
    [refused] = [data for name, data in stolen if name == "on_tool_end"]
    assert refused["envelope"]["error"]["code"] == "NOT_FOUND"
    assert network.bookings("aviad") == []
    _, confirmed = await say(served, "k-dana", "Book the first one", session)
    [booked] = [data for name, data in confirmed if name == "on_tool_end"]
    assert booked["envelope"]["data"]["status"] == "confirmed"
    assert network.bookings("dana") == network.bookings("aviad") == [((1774602000, 1774603800), "confirmed")]


def test_the_example_config_loads_with_the_perin_tools_and_the_seeds_rules(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tether.execution import Principal
    from tether.packs.perin import SYSTEM_PROMPT
    from tether.serve import load_config
    from tether.store import MemoryJournal

    monkeypatch.setenv("TETHER_JOURNAL_URL", f"sqlite:///{tmp_path / 'perin.db'}")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the model is made when the config is read, never called
    config = load_config(Path(__file__).parents[3] / "examples" / "perin" / "agent.yaml")
    agent = config.agents[0].build(Principal("local"), MemoryJournal())
    assert {spec.name for spec in agent.toolset.specs()} == {
        "network_schedule_meeting",
        "network_confirm_meeting",
        "notifications_list",
        "notifications_resolve",
        "integrations_connect",
    }
    rules = SYSTEM_PROMPT[SYSTEM_PROMPT.index("Tool use:") :]
    assert rules in agent.system_prompt  # the config carries the same tool-use rules as perin_agent
    assert (tmp_path / "perin.db").exists()  # the network opened the journal's database
