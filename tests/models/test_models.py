"""Models: the public test doubles, the OpenAI provider over the SDK's real HTTP layer, record and replay."""

import dataclasses
import inspect
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx  # the transport layer of openai 3.x
import pytest
from openai import AsyncOpenAI, DefaultAsyncHttpxClient

from tether.dialects import render_results
from tether.exceptions import ModelError, UserError
from tether.loop import Agent
from tether.models import (
    Finish,
    FunctionModel,
    ModelRequest,
    OpenAIModel,
    ReasoningChunk,
    RecordingModel,
    ScriptedModel,
    TextChunk,
    ToolCallChunk,
    Usage,
    load_cassette,
    model_from_name,
)
from tether.tools import tool
from tether.types import (
    AssistantMessage,
    ErrorEnvelope,
    ErrorInfo,
    NeedsEnvelope,
    OkEnvelope,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def collect(model: Any, request: ModelRequest) -> list[Any]:
    return [chunk async for chunk in model.stream(request)]


async def test_scripted_model_streams_each_turn_in_chunks_and_records_requests() -> None:
    model = ScriptedModel(["abcdefghij", ["x", Finish("stop")]], chunk_size=4)
    request = ModelRequest(messages=[UserMessage(content="hi")])
    assert await collect(model, request) == [TextChunk("abcd"), TextChunk("efgh"), TextChunk("ij")]
    assert await collect(model, request) == [TextChunk("x"), Finish("stop")]
    assert model.requests == [request, request]
    with pytest.raises(UserError, match="ran out of turns"):
        await collect(model, request)


async def test_function_model_replies_from_sync_or_async_functions() -> None:
    async def echo(request: ModelRequest) -> str:
        return str(len(request.messages))

    request = ModelRequest(messages=[UserMessage(content="hi")])
    assert await collect(FunctionModel(echo, chunk_size=10), request) == [TextChunk("1")]
    hey = [TextChunk("h"), TextChunk("e"), TextChunk("y")]
    assert await collect(FunctionModel(lambda r: "hey", chunk_size=1), request) == hey


async def test_a_function_model_yielding_provider_dicts_streams_the_typed_events_they_hold() -> None:
    def reply(request: ModelRequest) -> list[Any]:
        if len(request.messages) > 2:
            return [chunk({"content": "5"}), chunk({}, "stop")]
        return [
            chunk({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "add", "arguments": '{"a": 2, '}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"b": 3}'}}]}),
            chunk({}, "tool_calls"),
        ]  # fmt: skip

    model = FunctionModel(reply, native_dialect="openai")
    first = await collect(model, ModelRequest(messages=[UserMessage(content="2+3?")]))
    assert first == [
        ToolCallChunk(0, "call_1", "add", '{"a": 2, '),
        ToolCallChunk(0, None, None, '"b": 3}'),
        Finish("tool_calls"),
    ]
    result = await Agent(model, [add]).run("2+3?")
    assert (result.output, result.reason) == ("5", "no_calls")
    assert [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)] == [OkEnvelope(data=5)]


async def test_a_function_model_yielding_raw_text_still_drives_a_text_dialect() -> None:
    def reply(request: ModelRequest) -> list[Any]:
        if len(request.messages) > 2:
            return ["fi", "ve"]
        return ['<tool_call>{"name": "add", ', '"arguments": {"a": 2, "b": 3}}</tool_call>']

    result = await Agent(FunctionModel(reply), [add], dialect="hermes").run("2+3?")
    assert (result.output, result.reason) == ("five", "no_calls")
    assert [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)] == [OkEnvelope(data=5)]


async def test_a_provider_dict_without_a_native_dialect_is_a_user_error_naming_the_fix() -> None:
    model = ScriptedModel([[chunk({"content": "hi"})]])
    with pytest.raises(UserError, match="native_dialect='openai'"):
        await collect(model, ModelRequest(messages=[UserMessage(content="hi")]))


async def test_scripted_tool_calls_in_a_native_dialect_stream_as_that_providers_events() -> None:
    call = ToolCall(id="call_9", name="add", arguments={"a": 1, "b": 2})
    model = ScriptedModel([[call], "3"], native_dialect="openai")
    result = await Agent(model, [add]).run("1+2?")
    assert result.output == "3"
    assert [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)] == [OkEnvelope(data=3)]


def sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip


def openai_client(responses: list[bytes], seen: list[dict[str, Any]]) -> AsyncOpenAI:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(
            200, content=responses[len(seen) - 1], headers={"content-type": "text/event-stream"}
        )

    return AsyncOpenAI(
        api_key="test", http_client=DefaultAsyncHttpxClient(transport=httpx.MockTransport(handle))
    )


async def test_openai_native_tool_calls_through_the_sdk_streaming_layer() -> None:
    seen: list[dict[str, Any]] = []
    turn1 = sse(
        chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                    "function": {"name": "add", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a": 2, '}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"b": 3}'}}]}),
        chunk({}, "tool_calls"),
    )  # fmt: skip
    turn2 = sse(
        chunk({"role": "assistant", "content": "2 + 3 = "}), chunk({"content": "5"}), chunk({}, "stop")
    )
    model = OpenAIModel("gpt-4o-mini", client=openai_client([turn1, turn2], seen))
    result = await Agent(model, [add], system_prompt="Be exact.").run("What is 2 + 3?")
    assert (result.output, result.reason) == ("2 + 3 = 5", "no_calls")
    results = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    assert results[0].envelope == OkEnvelope(data=5)
    assert seen[0]["tools"][0]["function"]["name"] == "add"
    assert seen[0]["stream"] is True
    assert seen[0]["messages"][0] == {"role": "system", "content": "Be exact."}
    assert seen[1]["messages"][-2]["tool_calls"][0]["function"] == {
        "name": "add",
        "arguments": '{"a": 2, "b": 3}',
    }
    assert seen[1]["messages"][-1]["role"] == "tool"
    assert json.loads(seen[1]["messages"][-1]["content"]) == {"ok": True, "data": 5}


async def test_the_openai_model_yields_only_typed_events_made_from_the_sdk_stream() -> None:
    body = sse(
        chunk({"role": "assistant", "reasoning_content": "Sum."}),
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                               "function": {"name": "add", "arguments": '{"a": 2,'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' "b": 3}'}}]}),
        {**chunk({}, "tool_calls"), "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}},
    )  # fmt: skip
    model = OpenAIModel("gpt-4o-mini", client=openai_client([body], []))
    events = await collect(model, ModelRequest(messages=[UserMessage(content="2+3?")]))
    assert events == [
        ReasoningChunk("Sum."),
        ToolCallChunk(0, "call_1", "add", '{"a": 2,'),
        ToolCallChunk(0, None, None, ' "b": 3}'),
        Finish("tool_calls"),
        Usage(12, 7),
    ]


ENVELOPES = {
    "ok": OkEnvelope(data={"sum": 5, "note": None}),
    "needs": NeedsEnvelope(needs={"city": "Which city?"}),
    "error": ErrorEnvelope(error=ErrorInfo(code="INVALID_ARGS", message="b is required", recoverable=True)),
}
SENT = {  # what a model reads of each, whichever way it reaches it: envelope nulls left out, the tool's kept
    "ok": '{"ok":true,"data":{"sum":5,"note":null}}',
    "needs": '{"ok":false,"needs":{"city":"Which city?"}}',
    "error": '{"ok":false,"error":{"code":"INVALID_ARGS","message":"b is required","recoverable":true}}',
}


@pytest.mark.parametrize("kind", ENVELOPES)
async def test_openai_sends_a_tool_result_as_the_one_rendering_every_dialect_uses(kind: str) -> None:
    seen: list[dict[str, Any]] = []
    model = OpenAIModel("gpt-4o-mini", client=openai_client([sse(chunk({"content": "ok"}))], seen))
    result = ToolResultMessage(call_id="call_1", name="add", envelope=ENVELOPES[kind])
    call = ToolCall(id="call_1", name="add", arguments={"a": 2})
    messages = [UserMessage(content="add"), AssistantMessage(tool_calls=(call,)), result]
    await collect(model, ModelRequest(messages=messages))
    assert seen[0]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": SENT[kind]}
    assert SENT[kind] in render_results("hermes", [result])  # a text dialect's model reads the same


async def test_openai_with_a_text_dialect_streams_plain_text() -> None:
    seen: list[dict[str, Any]] = []
    text = '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 1}}\n</tool_call>'
    turn1 = sse(
        chunk({"role": "assistant", "content": text[:20]}), chunk({"content": text[20:]}), chunk({}, "stop")
    )
    turn2 = sse(chunk({"role": "assistant", "content": "two"}), chunk({}, "stop"))
    model = OpenAIModel("qwen", client=openai_client([turn1, turn2], seen), native_tools=False)
    result = await Agent(model, [add], dialect="hermes").run("1+1?")
    assert result.output == "two"
    assert "tools" not in seen[0]
    assert "add" in seen[0]["messages"][0]["content"]  # taught in the system prompt


async def test_a_recorded_native_run_replays_identically(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    call = ToolCall(id="call_1", name="add", arguments={"a": 4, "b": 5})
    scripted = ScriptedModel([[TextChunk("Adding."), call, Usage(3, 4)], "nine"], native_dialect="openai")
    first = await Agent(RecordingModel(scripted, cassette, {"prompt": "4+5?"}), [add]).run("4+5?")
    header, replay = load_cassette(cassette)
    assert header["cassette"] == 2
    second = await Agent(replay, [add]).run("4+5?")
    assert (first.output, second.output) == ("nine", "nine")
    assert first.messages[2:] == second.messages[2:]


async def test_a_version_1_cassette_of_provider_json_still_replays(tmp_path: Path) -> None:
    cassette = tmp_path / "old.jsonl"
    turns = [
        [chunk({"role": "assistant", "content": "Adding."}),
         chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                "function": {"name": "add", "arguments": '{"a": 4, "b": 5}'}}]}),
         chunk({}, "tool_calls")],
        [chunk({"content": "nine"}), chunk({}, "stop")],
    ]  # fmt: skip
    lines = [{"cassette": 1, "native_dialect": "openai", "prompt": "4+5?"}]
    lines += [{"turn": n, "chunks": chunks} for n, chunks in enumerate(turns)]
    cassette.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    header, replay = load_cassette(cassette)
    result = await Agent(replay, [add]).run(header["prompt"])
    assert (result.output, result.reason) == ("nine", "no_calls")
    replied = result.messages[2]
    assert isinstance(replied, AssistantMessage)
    assert (replied.content, [(c.id, c.arguments) for c in replied.tool_calls]) == (
        "Adding.",
        [("call_1", {"a": 4, "b": 5})],
    )
    assert [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)] == [OkEnvelope(data=9)]


def test_a_cassette_event_that_is_no_model_event_is_a_user_error_naming_the_line(tmp_path: Path) -> None:
    cassette = tmp_path / "bad.jsonl"
    cassette.write_text(
        '{"cassette": 2}\n{"turn": 0, "chunks": ["hi", {"event": "Nope"}]}\n', encoding="utf-8"
    )
    with pytest.raises(UserError, match=r"bad.jsonl:2 holds an event that is not a model event"):
        load_cassette(cassette)


async def test_a_recorded_run_replays_identically(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    text = '<tool_call>\n{"name": "add", "arguments": {"a": 4, "b": 5}}\n</tool_call>'
    recorder = RecordingModel(ScriptedModel([text, "nine"], chunk_size=5), cassette, {"prompt": "4+5?"})
    first = await Agent(recorder, [add], dialect="hermes").run("4+5?")
    header, replay = load_cassette(cassette)
    assert header["prompt"] == "4+5?"
    second = await Agent(replay, [add], dialect="hermes").run("4+5?")
    assert (first.output, second.output) == ("nine", "nine")
    assert [m for m in first.messages if isinstance(m, ToolResultMessage)] == [
        m for m in second.messages if isinstance(m, ToolResultMessage)
    ]


def test_no_configured_model_says_how_to_configure_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TETHER_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UserError, match="--model openai:gpt-4o-mini"):
        model_from_name(None)
    with pytest.raises(UserError, match="Unknown model 'acme:x'"):
        model_from_name("acme:x")
    monkeypatch.setenv("TETHER_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    assert model_from_name(None).name == "openai:gpt-4o-mini"


def test_a_file_that_is_not_a_cassette_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text('{"turn": 0}\n', encoding="utf-8")
    with pytest.raises(UserError, match="not a tether cassette"):
        load_cassette(tmp_path / "x.jsonl")


async def test_a_provider_failure_is_a_model_error_naming_the_model_and_the_cause() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, json={"error": {"message": "Rate limit reached", "type": "rate_limit"}})

    client = AsyncOpenAI(
        api_key="test",
        max_retries=0,
        http_client=DefaultAsyncHttpxClient(transport=httpx.MockTransport(refuse)),
    )
    model = OpenAIModel("gpt-4o-mini", client=client)
    result = await Agent(model, [add]).run("2 + 3?")  # the run ends with an error event, not an exception
    assert result.reason == "model_error"
    assert isinstance(result.error, ModelError)
    assert re.search(r"openai:gpt-4o-mini .*RateLimitError.*Rate limit reached", str(result.error))


def test_openai_needs_a_key_only_for_its_own_service(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UserError, match=r"OPENAI_API_KEY is not set.*--base-url"):
        OpenAIModel("gpt-4o-mini")
    local = OpenAIModel("qwen2.5:7b", base_url="http://localhost:11434/v1")  # Ollama needs no key
    assert str(local.client.base_url) == "http://localhost:11434/v1/"


async def test_parallel_calls_streamed_by_the_sdk_start_before_the_response_ends() -> None:
    started: list[float] = []
    finished_streaming: list[float] = []

    @tool(side_effects="none")
    async def lookup(city: str) -> str:
        """Look a city up."""
        started.append(time.monotonic())
        return city

    first = [
        chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
               "function": {"name": "lookup", "arguments": '{"city": "Oslo"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
               "function": {"name": "lookup", "arguments": '{"city": "Rome"}'}}]}),
        chunk({}, "tool_calls"),
    ]  # fmt: skip
    turns = [first, [chunk({"role": "assistant", "content": "Done."}), chunk({}, "stop")]]

    async def body(chunks: list[dict[str, Any]]) -> AsyncIterator[bytes]:
        for c in chunks:
            yield sse(c)[: -len(b"data: [DONE]\n\n")]
            await anyio.sleep(0.05)  # the model is still generating
        finished_streaming.append(time.monotonic())
        yield b"data: [DONE]\n\n"

    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body(turns.pop(0)), headers={"content-type": "text/event-stream"})

    client = AsyncOpenAI(
        api_key="test", http_client=DefaultAsyncHttpxClient(transport=httpx.MockTransport(handle))
    )
    result = await Agent(OpenAIModel("gpt-4o-mini", client=client), [lookup]).run("Oslo and Rome?")
    assert result.output == "Done."
    assert len(started) == 2
    assert started[0] < finished_streaming[0] - 0.05  # Oslo's call ran while Rome's was still streaming


def test_model_request_sets_its_slots_as_the_generated_init_would() -> None:
    # ModelRequest's hand-written __init__ (one request a model turn): the generated one's parameters and
    # defaults, the same fields, still frozen.
    fields = [
        (f.name, f.type, dataclasses.field(default=() if f.name == "tools" else f.default))
        for f in dataclasses.fields(ModelRequest)
    ]
    twin = dataclasses.make_dataclass("GeneratedRequest", fields, frozen=True, slots=True)
    ours, theirs = inspect.signature(ModelRequest).parameters, inspect.signature(twin).parameters
    assert [(p.name, p.default, p.kind) for p in ours.values()] == [
        (p.name, p.default, p.kind) for p in theirs.values()
    ]
    message = UserMessage(content="hi")
    arguments: list[tuple[Any, ...]] = [([message],), ([message], (), "sys", "hermes")]
    for args in arguments:
        made = ModelRequest(*args)
        assert dataclasses.astuple(made) == dataclasses.astuple(twin(*args))
        assert ModelRequest(**dict(zip(ours, args, strict=False))) == made
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.system = "changed"  # pyright: ignore[reportAttributeAccessIssue] - it is frozen
    assert ModelRequest([]).tools == ()


_PROVIDER_JSON: dict[str, list[dict[str, Any]]] = {
    "openai": [
        {
            "type": "response.output_item.done",
            "item": {
                "type": "function_call",
                "id": "fc1",
                "call_id": "c1",
                "name": "add",
                "arguments": '{"a": 1}',
            },
        },
        {"type": "response.output_text.delta", "delta": "hi"},
        {"type": "response.completed", "response": {"usage": {"input_tokens": 3, "output_tokens": 2}}},
        {"choices": [{"delta": {"content": "x"}, "finish_reason": "stop"}]},
    ],
    "anthropic": [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "message_stop"},
    ],
    "gemini": [
        {
            "candidates": [
                {"content": {"parts": [{"text": "hi"}, {"functionCall": {"name": "add", "args": {"a": 1}}}]}}
            ]
        },
    ],
}


@pytest.mark.parametrize("native", sorted(_PROVIDER_JSON))
async def test_function_model_reads_provider_json_as_its_dialects_model_events(native: str) -> None:
    """`FunctionModel` reads a turn's provider JSON with the parser's `read`, found once a turn: it must stream
    exactly what `Dialect.model_events` makes of each object."""
    from tether.dialects import get_dialect

    objects = _PROVIDER_JSON[native]
    expected = [e for o in objects for e in get_dialect(native).model_events(o)]
    model = FunctionModel(lambda request: list(objects), native_dialect=native)
    streamed = [e async for e in model.stream(ModelRequest([], dialect=native))]
    assert expected
    assert streamed == expected


async def test_function_model_reads_provider_json_with_a_dialects_own_model_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A dialect that overrides `model_events` is read through it, not through its parser's `read`."""
    from tether.dialects import _registry, get_dialect, register_dialect
    from tether.dialects.openai import OpenAI

    # a registry of this test's own: tests that go over every dialect must not meet this one
    monkeypatch.setattr(_registry, "_DIALECTS", dict(_registry._DIALECTS))  # pyright: ignore[reportPrivateUsage]

    class Shouting(OpenAI):
        name = "test_shouting_openai"

        def model_events(self, event: Any) -> list[Any]:
            return [TextChunk(str(event.get("say", "")).upper())]

    register_dialect(Shouting(), replace=True)
    assert isinstance(get_dialect("test_shouting_openai"), Shouting)
    model = FunctionModel(lambda request: [{"say": "hi"}], native_dialect="test_shouting_openai")
    streamed = [e async for e in model.stream(ModelRequest([], dialect="test_shouting_openai"))]
    assert streamed == [TextChunk("HI")]


async def test_function_model_refuses_provider_json_for_a_text_dialect() -> None:
    model = FunctionModel(lambda request: [{"type": "response.completed"}], native_dialect="hermes")
    with pytest.raises(UserError, match="reads text, not a provider's JSON"):
        _ = [e async for e in model.stream(ModelRequest([], dialect="hermes"))]
