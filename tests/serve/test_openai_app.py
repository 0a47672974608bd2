"""`tether serve`'s app mounts the OpenAI-compatible endpoint: its config's upstreams and its agents, behind
the agent API's keys; config files name upstreams."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from fastapi import FastAPI

from tether.exceptions import UserError
from tether.serve import ApiKey, Upstream, hash_key, load_config

from .conftest import scripted
from .openai_fakes import FakeUpstream, free_socket, running, url_of

WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
ASK: Any = [{"role": "user", "content": "Weather in Oslo?"}]


def test_tether_serve_answers_v1_for_its_upstreams_and_agents_behind_its_keys(
    make_app: Callable[..., FastAPI],
) -> None:
    fake = FakeUpstream(
        pieces=['<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>']
    )
    up_sock, sock = free_socket(), free_socket()
    app = make_app(
        scripted("helper", ["Hello from the agent."]),
        keys=[ApiKey(hash_key("sesame"), "alice")],
        upstreams={"qwen": Upstream(base_url=f"{url_of(up_sock)}/v1", model="qwen", dialect="hermes")},
    )
    with running(fake.app(), up_sock), running(app, sock):
        keyed = openai.OpenAI(base_url=f"{url_of(sock)}/v1", api_key="sesame", max_retries=0)
        assert [m.id for m in keyed.models.list()] == ["helper", "qwen"]
        reply = keyed.chat.completions.create(model="qwen", messages=ASK, tools=[WEATHER])
        assert reply.choices[0].finish_reason == "tool_calls"
        answer = keyed.chat.completions.create(model="helper", messages=ASK)
        assert answer.choices[0].message.content == "Hello from the agent."
        stranger = openai.OpenAI(base_url=f"{url_of(sock)}/v1", api_key="guess", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            stranger.chat.completions.create(model="qwen", messages=ASK)
    assert len(fake.requests) == 1  # the stranger's request never reached the upstream


def test_a_config_file_names_the_upstreams_of_the_openai_endpoint(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        """
agents:
  - {name: helper, model: "tether:demo", dialect: hermes}
upstreams:
  qwen: {baseUrl: "http://127.0.0.1:8000/v1", model: Qwen/Qwen2.5-7B-Instruct, dialect: hermes, apiKeyEnv: VLLM_KEY, timeoutS: 30}
  llama: {baseUrl: "http://127.0.0.1:11434/v1", model: llama3.2, dialect: pythonic}
""",
        encoding="utf-8",
    )
    assert load_config(path).upstreams == {
        "qwen": Upstream("http://127.0.0.1:8000/v1", "Qwen/Qwen2.5-7B-Instruct", "hermes", "VLLM_KEY", 30.0),
        "llama": Upstream("http://127.0.0.1:11434/v1", "llama3.2", "pythonic"),
    }


def test_an_upstream_in_a_dialect_tether_does_not_know_is_a_user_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        'agents:\n  - {name: helper, model: "tether:demo"}\nupstreams:\n  q: {baseUrl: "http://x/v1", model: q, dialect: hermez}\n',
        encoding="utf-8",
    )
    with pytest.raises(UserError, match=r"agents\.yaml: upstreams\.q\.dialect: no dialect 'hermez'"):
        load_config(path)
