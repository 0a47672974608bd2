"""The OpenAI-compatible endpoint, driven by the official `openai` client against a real uvicorn, with a fake
upstream model behind it."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest
from fastapi import FastAPI
from openai.types.chat import ChatCompletion, ChatCompletionMessageFunctionToolCall
from starlette.routing import Mount

from tether.loop import Agent
from tether.models import FunctionModel, ModelRequest
from tether.serve import Upstream
from tether.serve._openai import openai_router as router
from tether.tools import tool

from .openai_fakes import FakeUpstream, free_socket, running, url_of

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The time in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
ASK: Any = [{"role": "user", "content": "Weather and time in Oslo?"}]
TOOLS: Any = [WEATHER, TIME]


def calls_of(completion: ChatCompletion) -> list[tuple[str, str]]:
    """(name, arguments) of each function call in the answer."""
    calls = completion.choices[0].message.tool_calls or []
    return [
        (c.function.name, c.function.arguments)
        for c in calls
        if isinstance(c, ChatCompletionMessageFunctionToolCall)
    ]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class Served:
    def __init__(self, url: str, fake: FakeUpstream, turns: deque[str]):
        self.url = url
        self.fake = fake
        self.turns = turns
        """What the `adder` agent's model says next, one entry per model turn."""
        self.client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=20)

    def reply(self, *pieces: str, mode: str = "ok") -> None:
        self.fake.pieces, self.fake.mode = list(pieces), mode
        self.fake.requests.clear()

    @property
    def sent(self) -> dict[str, Any]:
        """What the upstream received last."""
        return self.fake.requests[-1]

    def post(self, body: Any) -> httpx2.Response:
        return httpx2.post(f"{self.url}/v1/chat/completions", json=body, timeout=20)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    fake, turns = FakeUpstream(), deque[str]()
    sock = free_socket()
    up = f"{url_of(sock)}/up/v1"
    upstreams = {
        "qwen": Upstream(base_url=up, model="qwen2.5-7b", dialect="hermes"),
        "llama": Upstream(base_url=up, model="llama-3.2", dialect="pythonic"),
        "slow": Upstream(base_url=up, model="slow", dialect="hermes", timeout=0.5),
        "down": Upstream(base_url="http://127.0.0.1:9/v1", model="down", dialect="hermes", timeout=2),
    }
    adder = Agent(FunctionModel(lambda request: turns.popleft()), [add], dialect="hermes")
    app = FastAPI()
    app.include_router(router(upstreams, {"adder": adder}))
    app.router.routes.append(Mount("/up", fake.app()))
    with running(app, sock):
        yield Served(url_of(sock), fake, turns)


# ------------------------------------------------------------------------------------------- pass-through


def test_models_lists_every_upstream_and_agent(served: Served) -> None:
    assert [m.id for m in served.client.models.list()] == ["adder", "down", "llama", "qwen", "slow"]


def test_a_call_in_the_models_text_comes_back_as_standard_tool_calls(served: Served) -> None:
    served.reply(
        "Let me check. <tool_",
        'call>\n{"name": "get_weather", "argu',
        'ments": {"city": "Oslo"}}\n</tool_call>',
    )
    completion = served.client.chat.completions.create(
        model="qwen", messages=ASK, tools=TOOLS, temperature=0.2
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check. "
    [call] = choice.message.tool_calls or []
    assert isinstance(call, ChatCompletionMessageFunctionToolCall)
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Oslo"})
    assert call.id.startswith("call_")
    assert completion.usage is not None
    assert completion.usage.total_tokens == 8


def test_the_upstream_is_taught_the_tools_in_its_dialect_and_gets_no_tools_field(served: Served) -> None:
    served.reply("Sunny.")
    served.client.chat.completions.create(
        model="qwen",
        messages=[{"role": "system", "content": "Be brief."}, *ASK],
        tools=TOOLS,
        temperature=0.2,
    )
    sent = served.sent
    assert "tools" not in sent
    assert "tool_choice" not in sent
    assert (sent["model"], sent["temperature"], sent["stream"]) == ("qwen2.5-7b", 0.2, True)
    system = sent["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("Be brief.\n\n# Tools")
    assert '"name":"get_weather"' in system["content"]
    assert "<tool_call>" in system["content"]
    assert sent["messages"][1:] == ASK


def test_streamed_parallel_calls_arrive_as_standard_deltas(served: Served) -> None:
    served.reply("[get_weather(city='Oslo'), ", "get_time(ci", "ty='Oslo')]")
    chunks = list(
        served.client.chat.completions.create(model="llama", messages=ASK, tools=TOOLS, stream=True)
    )
    calls: dict[int, dict[str, Any]] = {}
    for c in chunks:
        for d in (c.choices[0].delta.tool_calls or []) if c.choices else []:
            if d.index not in calls:  # the first delta of a call names it, with empty arguments
                assert d.function is not None
                assert (bool(d.id), bool(d.function.name), d.function.arguments) == (True, True, "")
                calls[d.index] = {"id": d.id, "name": d.function.name, "arguments": ""}
            else:  # the rest carry only argument fragments
                assert d.function is not None
                assert (d.id, d.function.name) == (None, None)
                calls[d.index]["arguments"] += d.function.arguments or ""
    assert [(c["name"], json.loads(c["arguments"])) for c in calls.values()] == [
        ("get_weather", {"city": "Oslo"}),
        ("get_time", {"city": "Oslo"}),
    ]
    assert len({c["id"] for c in calls.values()}) == 2
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"


def test_earlier_calls_and_results_are_written_back_in_the_dialect(served: Served) -> None:
    served.reply("It is sunny in Oslo.")
    history: Any = [
        *ASK,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": '{"city": "Oslo"}'}},
        ]},
        {"role": "tool", "tool_call_id": "call_a", "content": '{"sky": "sunny"}'},
        {"role": "tool", "tool_call_id": "call_b", "content": "12:00"},
    ]  # fmt: skip
    completion = served.client.chat.completions.create(model="qwen", messages=history, tools=TOOLS)
    assert completion.choices[0].message.content == "It is sunny in Oslo."
    assert completion.choices[0].finish_reason == "stop"
    assistant, results = served.sent["messages"][2:]
    assert assistant == {
        "role": "assistant",
        "content": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {"city": "Oslo"}}\n</tool_call>\n',
    }
    assert results == {
        "role": "user",
        "content": '<tool_response>\n{"ok":true,"data":{"sky":"sunny"}}\n</tool_response>\n'
        '<tool_response>\n{"ok":true,"data":"12:00"}\n</tool_response>',
    }


def test_pythonic_history_is_written_as_python_calls(served: Served) -> None:
    served.reply("Done.")
    history: Any = [
        *ASK,
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]  # fmt: skip
    served.client.chat.completions.create(model="llama", messages=history, tools=TOOLS)
    assert served.sent["messages"][2] == {"role": "assistant", "content": "[get_weather(city='Oslo')]"}


def test_tool_choice_none_teaches_no_tools_and_drops_the_calls_written_anyway(served: Served) -> None:
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    served.reply("I will look. ", text)
    completion = served.client.chat.completions.create(
        model="qwen", messages=ASK, tools=TOOLS, tool_choice="none"
    )
    assert completion.choices[0].message.content == "I will look. "
    assert completion.choices[0].message.tool_calls is None
    assert completion.choices[0].finish_reason == "stop"
    assert [m["role"] for m in served.sent["messages"]] == ["user"]
    assert (completion.model_extra or {})["tether_errors"] == [
        {"message": "dropped a call to 'get_weather': tool_choice is 'none'", "code": "call_dropped"}
    ]


def test_a_named_tool_choice_teaches_that_tool_alone_and_drops_calls_to_others(served: Served) -> None:
    served.reply(
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
        '<tool_call>\n{"name": "get_time", "arguments": {"city": "Oslo"}}\n</tool_call>'
    )
    completion = served.client.chat.completions.create(
        model="qwen",
        messages=ASK,
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_time"}},
    )
    assert [name for name, _ in calls_of(completion)] == ["get_time"]
    system = served.sent["messages"][0]["content"]
    assert '"name":"get_time"' in system
    assert "get_weather" not in system
    assert system.endswith("You must call the function get_time in your reply.")
    assert (completion.model_extra or {})["tether_errors"] == [
        {"message": "dropped a call to 'get_weather': tool_choice names 'get_time'", "code": "call_dropped"}
    ]


def test_required_tool_choice_is_asked_for_in_the_prompt(served: Served) -> None:
    served.reply('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>')
    served.client.chat.completions.create(model="qwen", messages=ASK, tools=TOOLS, tool_choice="required")
    assert served.sent["messages"][0]["content"].endswith(
        "You must call at least one function in your reply."
    )


def test_parallel_tool_calls_false_keeps_only_the_first_call(served: Served) -> None:
    served.reply("[get_weather(city='Oslo'), get_time(city='Oslo')]")
    completion = served.client.chat.completions.create(
        model="llama", messages=ASK, tools=TOOLS, parallel_tool_calls=False
    )
    assert [name for name, _ in calls_of(completion)] == ["get_weather"]
    assert served.sent["messages"][0]["content"].endswith("Call at most one function per reply.")


def test_repaired_arguments_reach_the_client_as_valid_json_when_streamed(served: Served) -> None:
    served.reply('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo",}}', "\n</tool_call>")
    chunks = served.client.chat.completions.create(model="qwen", messages=ASK, tools=TOOLS, stream=True)
    arguments = "".join(
        d.function.arguments or ""
        for c in chunks
        for d in ((c.choices[0].delta.tool_calls or []) if c.choices else [])
        if d.function
    )
    assert json.loads(arguments) == {"city": "Oslo"}


def test_a_call_that_cannot_be_read_keeps_the_models_text_as_arguments_and_is_reported(
    served: Served,
) -> None:
    # announced by name, then unreadable: the client gets the model's malformed arguments, as OpenAI's API
    # would pass them on, and tether's reading of what went wrong beside them
    served.reply('Here: <tool_call>\n{"name": "get_weather", "arguments": {"city": }}\n</tool_call> sorry')
    completion = served.client.chat.completions.create(model="qwen", messages=ASK, tools=TOOLS)
    raw = '\n{"name": "get_weather", "arguments": {"city": }}\n'
    assert calls_of(completion) == [("get_weather", raw)]
    assert (completion.model_extra or {})["tether_errors"] == [
        {"message": "invalid JSON: unexpected character '}'", "code": "call_unreadable", "raw": raw}
    ]
    assert completion.choices[0].message.content == "Here:  sorry"


def test_text_that_is_no_call_at_all_is_reported_without_a_call(served: Served) -> None:
    served.reply("<tool_call>\nnot json at all\n</tool_call>")
    completion = served.client.chat.completions.create(model="qwen", messages=ASK, tools=TOOLS)
    assert completion.choices[0].message.tool_calls is None
    assert completion.choices[0].finish_reason == "stop"
    assert [e["code"] for e in (completion.model_extra or {})["tether_errors"]] == ["call_unreadable"]


def test_streamed_errors_are_sse_comments_the_client_skips(served: Served) -> None:
    served.reply("[get_weather(city='Oslo'), get_time(city='Oslo')]")
    body = {"model": "llama", "messages": ASK, "tools": TOOLS, "stream": True, "parallel_tool_calls": False}
    raw = served.post(body).text
    assert ': tether-error {"message": "dropped a call to \'get_time\'' in raw
    served.reply("[get_weather(city='Oslo'), get_time(city='Oslo')]")
    chunks = list(  # the client reads the same stream cleanly
        served.client.chat.completions.create(
            model="llama", messages=ASK, tools=TOOLS, stream=True, parallel_tool_calls=False
        )
    )
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"


def test_text_without_calls_streams_as_content_with_usage_when_asked(served: Served) -> None:
    served.reply("Hel", "lo ", "there.")
    chunks = list(
        served.client.chat.completions.create(
            model="qwen", messages=ASK, tools=TOOLS, stream=True, stream_options={"include_usage": True}
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello there."
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 8
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


# ------------------------------------------------------------------------------------------------- errors


def test_an_upstream_that_is_down_is_a_502_naming_it(served: Served) -> None:
    with pytest.raises(openai.InternalServerError) as caught:
        served.client.chat.completions.create(model="down", messages=ASK, tools=TOOLS)
    assert caught.value.status_code == 502
    assert "upstream 'down' at http://127.0.0.1:9/v1 could not be reached" in caught.value.message


def test_an_upstream_that_stalls_is_a_504_after_its_timeout(served: Served) -> None:
    served.reply("Thinking", mode="slow")
    started = time.monotonic()
    with pytest.raises(openai.APIStatusError) as caught:
        served.client.chat.completions.create(model="slow", messages=ASK, tools=TOOLS)
    assert caught.value.status_code == 504
    assert "did not answer within 0.5 s" in caught.value.message
    assert time.monotonic() - started < 5


def test_an_upstream_that_never_answers_is_a_504_before_any_stream_starts(served: Served) -> None:
    served.reply("Hi", mode="hang")
    started = time.monotonic()
    stream = served.post({"model": "slow", "messages": ASK, "stream": True})
    assert stream.status_code == 504
    assert stream.json()["error"]["code"] == "upstream_timeout"
    assert time.monotonic() - started < 5


def test_an_upstream_that_stalls_mid_stream_ends_the_stream_with_an_error(served: Served) -> None:
    served.reply("Thinking", mode="slow")
    stream = served.client.chat.completions.create(model="slow", messages=ASK, tools=TOOLS, stream=True)
    with pytest.raises(openai.APIError, match=r"did not answer within 0\.5 s"):
        list(stream)


@pytest.mark.parametrize(
    ("mode", "status", "message"),
    [
        ("html", 502, "answered text/html; charset=utf-8, not an event stream"),
        ("status", 502, "answered 503: model overloaded"),
        ("not_json", 502, "streamed an event that is not JSON"),
        ("mid_error", 502, "failed mid-stream: CUDA out of memory"),
    ],
)
def test_an_upstream_answering_garbage_is_a_clean_error(
    served: Served, mode: str, status: int, message: str
) -> None:
    served.reply("Hi", mode=mode)
    response = served.post({"model": "qwen", "messages": ASK})
    assert response.status_code == status
    assert message in response.json()["error"]["message"]
    assert response.json()["error"]["type"] == "upstream_error"


def test_garbage_mid_stream_reaches_the_streaming_client_as_an_error(served: Served) -> None:
    served.reply("Hi", mode="not_json")
    with pytest.raises(openai.APIError, match="streamed an event that is not JSON"):
        list(served.client.chat.completions.create(model="qwen", messages=ASK, stream=True))


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"model": "qwen"}, 400, "messages: Field required"),
        ({"model": "qwen", "messages": []}, 400, "messages: List should have at least 1 item"),
        ({"model": "qwen", "messages": ASK, "n": 2}, 400, "n: Input should be 1"),
        ({"model": "gpt-9", "messages": ASK}, 404, "the model 'gpt-9' does not exist here"),
        (
            {
                "model": "qwen",
                "messages": ASK,
                "tools": TOOLS,
                "tool_choice": {"type": "function", "function": {"name": "nope"}},
            },
            400,
            "tool_choice names 'nope', which is not among the tools",
        ),
        (
            {
                "model": "qwen",
                "messages": ASK,
                "tools": [{"type": "function", "function": {"name": "f", "parameters": 3}}],
            },
            400,
            "tools[0]",
        ),
        ({"model": "adder", "messages": ASK, "tools": TOOLS}, 400, "runs its own tools on the server"),
    ],
)
def test_an_invalid_request_is_a_4xx_with_a_message(
    served: Served, body: Any, status: int, message: str
) -> None:
    response = served.post(body)
    assert response.status_code == status
    assert message in response.json()["error"]["message"]


def test_a_body_that_is_not_json_is_a_400(served: Served) -> None:
    response = httpx2.post(f"{served.url}/v1/chat/completions", content=b"{nope", timeout=20)
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("the request body is not JSON")


# ------------------------------------------------------------------------------------------------- agents


def _adder_turns(served: Served) -> None:
    served.turns.extend(
        ['<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>', "It is 5."]
    )


def test_an_agent_runs_its_tools_on_the_server_and_answers_with_the_final_text(served: Served) -> None:
    _adder_turns(served)
    completion = served.client.chat.completions.create(
        model="adder", messages=[{"role": "user", "content": "2+3?"}]
    )
    assert completion.choices[0].message.content == "It is 5."
    assert completion.choices[0].message.tool_calls is None
    events = (completion.model_extra or {})["tether_events"]
    assert [e["event"] for e in events if e["event"] in ("on_tool_start", "on_tool_end", "on_chain_end")] == [
        "on_tool_start",
        "on_tool_end",
        "on_chain_end",
    ]
    assert next(e for e in events if e["event"] == "on_tool_end")["envelope"] == {"ok": True, "data": 5}


def test_a_streamed_agent_run_carries_tethers_events_in_comments_the_client_skips(served: Served) -> None:
    _adder_turns(served)
    body: Any = {"model": "adder", "messages": [{"role": "user", "content": "2+3?"}], "stream": True}
    raw = served.post(body).text
    events = [
        json.loads(line.removeprefix(": tether-event "))
        for line in raw.splitlines()
        if line.startswith(": tether-event ")
    ]
    assert (events[0]["event"], events[-1]["event"]) == ("on_chain_start", "on_chain_end")
    _adder_turns(served)
    chunks = list(
        served.client.chat.completions.create(model="adder", messages=body["messages"], stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices).endswith("It is 5.")
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_an_agent_whose_model_fails_is_a_502(served: Served) -> None:
    served.turns.clear()  # the model raises IndexError: popleft from an empty deque
    response = served.post({"model": "adder", "messages": [{"role": "user", "content": "2+3?"}]})
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "model_error"


def test_history_reaches_the_agents_model(served: Served) -> None:
    seen: list[ModelRequest] = []
    agent = Agent(FunctionModel(lambda request: seen.append(request) or "ok"), [add], dialect="hermes")
    sock = free_socket()
    app = FastAPI()
    app.include_router(router(agents={"a": agent}))
    with running(app, sock):
        client = openai.OpenAI(base_url=f"{url_of(sock)}/v1", api_key="unused", max_retries=0)
        history: Any = [
            {"role": "system", "content": "ignored: the agent has its own"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": [{"type": "text", "text": "2+3?"}]},
        ]
        assert client.chat.completions.create(model="a", messages=history).choices[0].message.content == "ok"
    assert "ignored" not in seen[0].system
    assert [(m.kind, getattr(m, "content", None)) for m in seen[0].messages if m.kind != "system"] == [
        ("user", "hi"),
        ("assistant", "hello"),
        ("user", "2+3?"),
    ]


# ------------------------------------------------------------------------------------------ principals


def test_the_callers_principal_reaches_the_agent_factory_and_a_refusal_its_status() -> None:
    from fastapi import Header, HTTPException

    from tether.execution import Principal

    made: list[Principal] = []

    async def caller(authorization: str | None = Header(default=None)) -> Principal:
        if authorization != "Bearer sesame":
            raise HTTPException(401, "a key, please")
        return Principal(id="alice", scopes=frozenset({"math"}))

    def build(principal: Principal) -> Agent:
        made.append(principal)
        return Agent(FunctionModel(lambda request: "ok"), [add], dialect="hermes", principal=principal)

    sock = free_socket()
    app = FastAPI()
    app.include_router(router(agents={"a": build}, caller=caller))
    ask: Any = [{"role": "user", "content": "hi"}]
    with running(app, sock):
        keyed = openai.OpenAI(base_url=f"{url_of(sock)}/v1", api_key="sesame", max_retries=0)
        assert keyed.chat.completions.create(model="a", messages=ask).choices[0].message.content == "ok"
        stranger = openai.OpenAI(base_url=f"{url_of(sock)}/v1", api_key="guess", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            stranger.chat.completions.create(model="a", messages=ask)
        with pytest.raises(openai.AuthenticationError):
            stranger.models.list()
    assert made == [Principal(id="alice", scopes=frozenset({"math"}))]


def test_a_name_that_is_both_an_upstream_and_an_agent_is_refused() -> None:
    from tether.exceptions import UserError

    agent = Agent(FunctionModel(lambda request: "ok"), [add], dialect="hermes")
    with pytest.raises(UserError, match=r"model names \['m'\] are both an upstream and an agent"):
        router({"m": Upstream(base_url="http://127.0.0.1:9/v1", model="m")}, {"m": agent})


def test_the_openapi_document_describes_both_routes_and_the_request_with_no_dangling_reference() -> None:
    app = FastAPI()
    app.include_router(router())
    document = app.openapi()
    assert {"/v1/models", "/v1/chat/completions"} <= set(document["paths"])
    body = document["paths"]["/v1/chat/completions"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["required"] == ["model", "messages"]
    assert "$defs" not in json.dumps(body)
    assert body["schema"]["properties"]["messages"]["items"]["properties"]["role"]["enum"] == [
        "system",
        "developer",
        "user",
        "assistant",
        "tool",
    ]
