"""`tool_choice` enforced, reasoning kept out of `content`, a whole answer's client that disconnects
cancelling the work, and the router's own HTTP client closed at shutdown: the official `openai` client
against a real uvicorn, a fake upstream behind it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from fastapi import FastAPI
from starlette.routing import Mount

from tether.loop import Agent
from tether.models import FunctionModel, ModelRequest
from tether.serve import Upstream
from tether.serve import openai_router as router
from tether.tools import tool

from .openai_fakes import FakeUpstream, free_socket, running, url_of
from .test_openai import ASK, TOOLS, calls_of

WEATHER_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
TIME_CALL = '<tool_call>\n{"name": "get_time", "arguments": {"city": "Oslo"}}\n</tool_call>'
GET_TIME: Any = {"type": "function", "function": {"name": "get_time"}}


class Served:
    def __init__(self, url: str, fake: FakeUpstream, agent_cancelled: threading.Event):
        self.url = url
        self.fake = fake
        self.agent_cancelled = agent_cancelled
        self.client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=20)

    def replies(self, *replies: list[str], mode: str = "ok") -> None:
        """The upstream's next answers, one per request; the last is repeated."""
        self.fake.script = [list(r) for r in replies[:-1]]
        self.fake.pieces, self.fake.mode = list(replies[-1]), mode
        self.fake.requests.clear()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    fake = FakeUpstream()
    agent_cancelled = threading.Event()

    @tool
    async def wait() -> str:
        """Wait for a long time."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            agent_cancelled.set()
            raise
        return "done"

    def stall(request: ModelRequest) -> str:
        return '<tool_call>\n{"name": "wait", "arguments": {}}\n</tool_call>'

    sock = free_socket()
    up = f"{url_of(sock)}/up/v1"
    upstreams = {
        "qwen": Upstream(base_url=up, model="qwen2.5-7b", dialect="hermes"),
        "qwen3": Upstream(base_url=up, model="qwen3-8b", dialect="hermes", reasoning_open=True),
    }
    app = FastAPI()
    app.include_router(router(upstreams, {"waiter": Agent(FunctionModel(stall), [wait], dialect="hermes")}))
    app.router.routes.append(Mount("/up", fake.app()))
    with running(app, sock, lifespan="on"):  # the router's client closes its pooled connections at the end
        yield Served(url_of(sock), fake, agent_cancelled)


# ---------------------------------------------------------------------------------- required / named


def test_required_retries_an_answer_without_a_call_and_the_client_sees_only_the_call(served: Served) -> None:
    served.replies(["No need, it is sunny."], [WEATHER_CALL])
    completion = served.client.chat.completions.create(
        model="qwen", messages=ASK, tools=TOOLS, tool_choice="required"
    )
    assert calls_of(completion) == [("get_weather", '{"city": "Oslo"}')]
    assert completion.choices[0].message.content is None
    assert len(served.fake.requests) == 2
    retry = served.fake.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "No need, it is sunny."}
    assert retry[-1]["role"] == "user"
    assert "did not call a function" in retry[-1]["content"]


def test_a_named_function_is_insisted_on_by_name(served: Served) -> None:
    served.replies([WEATHER_CALL], [WEATHER_CALL], [TIME_CALL])
    completion = served.client.chat.completions.create(
        model="qwen", messages=ASK, tools=TOOLS, tool_choice=GET_TIME
    )
    assert [name for name, _ in calls_of(completion)] == ["get_time"]
    assert len(served.fake.requests) == 3
    assert "did not call the function get_time" in served.fake.requests[2]["messages"][-1]["content"]


def test_required_unmet_after_two_retries_is_a_502_with_a_suggestion(served: Served) -> None:
    served.replies(["I would rather not."])
    with pytest.raises(openai.APIStatusError) as raised:
        served.client.chat.completions.create(model="qwen", messages=ASK, tools=TOOLS, tool_choice="required")
    assert raised.value.status_code == 502
    error: Any = raised.value.body
    assert error["code"] == "tool_choice_unmet"
    assert error["type"] == "upstream_error"
    assert error["param"] == "tool_choice"
    assert "Retry" in error["suggestion"]
    assert len(served.fake.requests) == 3  # the first attempt and two retries


def test_a_named_function_unmet_when_streamed_is_a_502_before_any_chunk(served: Served) -> None:
    served.replies([WEATHER_CALL])
    with pytest.raises(openai.APIStatusError) as raised:
        served.client.chat.completions.create(
            model="qwen", messages=ASK, tools=TOOLS, tool_choice=GET_TIME, stream=True
        )
    assert raised.value.status_code == 502
    assert "'get_time'" in str(raised.value)
    assert len(served.fake.requests) == 3


def test_a_streamed_required_answer_shows_none_of_the_attempt_it_retried(served: Served) -> None:
    served.replies(["Let me ", "think."], ["Checking. ", WEATHER_CALL, " Done."])
    chunks = list(
        served.client.chat.completions.create(
            model="qwen", messages=ASK, tools=TOOLS, tool_choice="required", stream=True
        )
    )
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "Checking.  Done."
    names = [
        call.function.name
        for c in chunks
        if c.choices
        for call in c.choices[0].delta.tool_calls or []
        if call.function is not None and call.function.name
    ]
    assert names == ["get_weather"]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert len(served.fake.requests) == 2


def test_auto_is_never_retried(served: Served) -> None:
    served.replies(["Sunny."])
    completion = served.client.chat.completions.create(model="qwen", messages=ASK, tools=TOOLS)
    assert completion.choices[0].message.content == "Sunny."
    assert len(served.fake.requests) == 1


# ------------------------------------------------------------------------------------------------ none


def test_tool_choice_none_keeps_reasoning_out_of_content_streamed_or_not(served: Served) -> None:
    served.replies(["<think>They want ", "weather.</think>", "Sunny. ", WEATHER_CALL])
    whole = served.client.chat.completions.create(model="qwen", messages=ASK, tools=TOOLS, tool_choice="none")
    message = whole.choices[0].message
    assert message.content == "Sunny. "
    assert (message.model_extra or {})["reasoning_content"] == "They want weather."
    assert message.tool_calls is None
    chunks = list(
        served.client.chat.completions.create(
            model="qwen", messages=ASK, tools=TOOLS, tool_choice="none", stream=True
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Sunny. "
    assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


# ------------------------------------------------------------------------------------------- no tools


def _streamed_text(chunks: list[Any], field: str) -> str:
    """The text of `field` (`content`, or the extension `reasoning_content`) over a stream's chunks."""
    out: list[str] = []
    for chunk in chunks:
        if chunk.choices:
            delta = chunk.choices[0].delta
            extra: dict[str, Any] = delta.model_extra or {}
            out.append(getattr(delta, field, None) or extra.get(field) or "")
    return "".join(out)


def test_without_tools_reasoning_is_kept_out_of_content_streamed_or_not(served: Served) -> None:
    served.replies(["<think>They want ", "weather.</thi", "nk>", "Sunny ", "in Oslo."])
    whole = served.client.chat.completions.create(model="qwen", messages=ASK)
    message = whole.choices[0].message
    assert message.content == "Sunny in Oslo."
    assert (message.model_extra or {})["reasoning_content"] == "They want weather."
    assert whole.choices[0].finish_reason == "stop"
    assert "tether_errors" not in (whole.model_extra or {})
    chunks = list(served.client.chat.completions.create(model="qwen", messages=ASK, stream=True))
    assert _streamed_text(chunks, "content") == "Sunny in Oslo."
    assert _streamed_text(chunks, "reasoning_content") == "They want weather."
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_without_tools_an_upstream_whose_template_opens_the_reasoning_shows_only_its_end(
    served: Served,
) -> None:
    served.replies(["They want ", "weather.</think>\n\n", "Sunny."])
    message = served.client.chat.completions.create(model="qwen3", messages=ASK).choices[0].message
    assert message.content == "\n\nSunny."
    assert (message.model_extra or {})["reasoning_content"] == "They want weather."
    chunks = list(served.client.chat.completions.create(model="qwen3", messages=ASK, stream=True))
    assert _streamed_text(chunks, "content") == "\n\nSunny."
    assert _streamed_text(chunks, "reasoning_content") == "They want weather."


def test_without_tools_a_call_written_anyway_is_dropped_and_reported(served: Served) -> None:
    # the client offered no tool to run it with; its text does not reach `content` either
    served.replies(["Let me look. ", WEATHER_CALL])
    whole = served.client.chat.completions.create(model="qwen", messages=ASK)
    assert whole.choices[0].message.content == "Let me look. "
    assert whole.choices[0].message.tool_calls is None
    assert whole.choices[0].finish_reason == "stop"
    assert (whole.model_extra or {})["tether_errors"] == [
        {"message": "dropped a call to 'get_weather': the request offers no tools", "code": "call_dropped"}
    ]
    chunks = list(served.client.chat.completions.create(model="qwen", messages=ASK, stream=True))
    assert _streamed_text(chunks, "content") == "Let me look. "
    assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)


def test_without_tools_markup_that_is_no_reasoning_nor_call_stays_content(served: Served) -> None:
    text = "Use <b>bold</b> or <think-tank> and a <tool_call mention."
    served.replies([text[:9], text[9:30], text[30:]])
    assert (
        served.client.chat.completions.create(model="qwen", messages=ASK).choices[0].message.content == text
    )


# ---------------------------------------------------------------------------------------- disconnects


def _eventually(check: Any, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_a_whole_answer_whose_client_disconnects_cancels_the_upstream_request(served: Served) -> None:
    served.replies(["Thinking", " slowly"], mode="slow")  # stalls 3 s after its first piece
    before = served.fake.cancelled
    with pytest.raises(httpx2.TimeoutException):
        httpx2.post(
            f"{served.url}/v1/chat/completions",
            json={"model": "qwen", "messages": ASK, "tools": TOOLS},
            timeout=0.5,
        )
    assert _eventually(lambda: served.fake.cancelled > before, within_s=2.0)
    served.replies(["ok"])


def test_a_whole_agent_answer_whose_client_disconnects_cancels_the_run_and_its_tools(served: Served) -> None:
    served.agent_cancelled.clear()
    with pytest.raises(httpx2.TimeoutException):
        httpx2.post(
            f"{served.url}/v1/chat/completions",
            json={"model": "waiter", "messages": [{"role": "user", "content": "wait"}]},
            timeout=0.5,
        )
    assert _eventually(served.agent_cancelled.is_set)


# ----------------------------------------------------------------------------------------- shutdown


def test_the_routers_own_http_client_is_closed_when_the_app_shuts_down(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[httpx2.AsyncClient] = []
    original = httpx2.AsyncClient

    def recording(*args: Any, **kwargs: Any) -> httpx2.AsyncClient:
        client = original(*args, **kwargs)
        made.append(client)
        return client

    monkeypatch.setattr(httpx2, "AsyncClient", recording)
    app = FastAPI()
    app.include_router(router({"m": Upstream(base_url="http://127.0.0.1:9/v1", model="m")}))
    monkeypatch.setattr(httpx2, "AsyncClient", original)
    assert len(made) == 1
    with running(app, free_socket(), lifespan="on"):
        assert not made[0].is_closed
    assert made[0].is_closed


def test_a_client_given_to_the_router_is_left_open_for_its_owner() -> None:
    given = httpx2.AsyncClient()
    app = FastAPI()
    app.include_router(router({"m": Upstream(base_url="http://127.0.0.1:9/v1", model="m")}, client=given))
    with running(app, free_socket(), lifespan="on"):
        pass
    assert not given.is_closed


def test_tether_serves_app_closes_the_routers_client_at_shutdown_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tether.serve import ServeConfig, create_app, default_agent

    made: list[httpx2.AsyncClient] = []
    original = httpx2.AsyncClient

    def recording(*args: Any, **kwargs: Any) -> httpx2.AsyncClient:
        client = original(*args, **kwargs)
        made.append(client)
        return client

    monkeypatch.setattr(httpx2, "AsyncClient", recording)
    app = create_app(ServeConfig(agents=[default_agent(tmp_path)], database=f"sqlite:///{tmp_path / 'db'}"))
    monkeypatch.setattr(httpx2, "AsyncClient", original)
    assert len(made) == 1
    with running(app, free_socket(), lifespan="on"):
        assert not made[0].is_closed
    assert made[0].is_closed
