"""AnthropicModel over the SDK's real HTTP layer: recorded-shape SSE streams in, request bodies checked."""

import json
import re
from typing import Any

import httpx2 as httpx  # the transport layer of anthropic 2.x
import pytest
from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient

from tether.dialects import render_results
from tether.exceptions import ModelError, UserError
from tether.loop import Agent
from tether.models import (
    AnthropicModel,
    Finish,
    ModelRequest,
    TextChunk,
    ToolCallChunk,
    ToolCallDone,
    Usage,
    model_from_name,
)
from tether.tools import tool
from tether.types import (
    AssistantMessage,
    ErrorEnvelope,
    ErrorInfo,
    NeedsEnvelope,
    OkEnvelope,
    Provenance,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

pytestmark = pytest.mark.anyio


@tool(name="calc.add", side_effects="none")
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def message_start() -> dict[str, Any]:
    return {"type": "message_start",
            "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
                        "content": [], "stop_reason": None, "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 1}}}  # fmt: skip


def message_end(stop_reason: str) -> list[dict[str, Any]]:
    return [
        {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
         "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]  # fmt: skip


def text_turn(*pieces: str) -> bytes:
    return sse(
        message_start(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}} for p in pieces),
        {"type": "content_block_stop", "index": 0},
        *message_end("end_turn"),
    )  # fmt: skip


def tool_turn() -> bytes:
    """Some text, then a `tool_use` block whose input arrives as JSON fragments."""
    return sse(
        message_start(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Adding."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_01", "name": "calc_add", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": '{"a": 2, '}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '"b": 3}'}},
        {"type": "content_block_stop", "index": 1},
        *message_end("tool_use"),
    )  # fmt: skip


def anthropic_client(
    responses: list[bytes], seen: list[dict[str, Any]], content_type: str = "text/event-stream"
) -> AsyncAnthropic:
    def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/messages"
        seen.append(json.loads(request.content))
        return httpx.Response(200, content=responses[len(seen) - 1], headers={"content-type": content_type})

    return AsyncAnthropic(
        api_key="test", http_client=DefaultAsyncHttpxClient(transport=httpx.MockTransport(handle))
    )


async def test_a_native_tool_call_streamed_as_json_fragments_runs_and_the_next_turn_answers() -> None:
    seen: list[dict[str, Any]] = []
    client = anthropic_client([tool_turn(), text_turn("2 + 3 = ", "5")], seen)
    model = AnthropicModel("claude-sonnet-5-5", client=client, max_tokens=256)
    result = await Agent(model, [add], system_prompt="Be exact.").run("What is 2 + 3?")
    assert (result.output, result.reason) == ("2 + 3 = 5", "no_calls")
    assert result.messages[2] == AssistantMessage(
        content="Adding.",
        tool_calls=(
            ToolCall(
                id="toolu_01",
                name="calc_add",
                arguments={"a": 2, "b": 3},
                provenance=Provenance(dialect="anthropic"),
            ),
        ),
        raw="",
    )
    assert result.messages[3] == ToolResultMessage(
        call_id="toolu_01", name="calc_add", envelope=OkEnvelope(data=5)
    )
    first, second = seen
    assert first == {
        "model": "claude-sonnet-5-5",
        "max_tokens": 256,
        "stream": True,
        "system": "Be exact.",
        "messages": [{"role": "user", "content": "What is 2 + 3?"}],
        "tools": [
            {
                "name": "calc_add",  # Anthropic forbids dots in tool names
                "description": "Add two numbers.",
                "input_schema": first["tools"][0]["input_schema"],
            }
        ],
    }
    assert first["tools"][0]["input_schema"]["required"] == ["a", "b"]
    assert second["messages"] == [
        {"role": "user", "content": "What is 2 + 3?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Adding."},
                {"type": "tool_use", "id": "toolu_01", "name": "calc_add", "input": {"a": 2, "b": 3}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": '{"ok":true,"data":5}'}
            ],
        },
    ]


async def test_the_model_yields_only_typed_events_made_from_the_sdk_stream() -> None:
    model = AnthropicModel("claude-sonnet-5-5", client=anthropic_client([tool_turn()], []))
    events = [e async for e in model.stream(ModelRequest(messages=[UserMessage(content="hey")]))]
    assert all(type(e) in (TextChunk, ToolCallChunk, ToolCallDone, Usage, Finish) for e in events)
    calls = [e for e in events if isinstance(e, ToolCallChunk | ToolCallDone) and e.index == 1]
    assert calls == [
        ToolCallChunk(1, "toolu_01", "calc_add", ""),
        ToolCallChunk(1, None, None, ""),
        ToolCallChunk(1, None, None, '{"a": 2, '),
        ToolCallChunk(1, None, None, '"b": 3}'),
        ToolCallDone(1),
    ]
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "Adding."
    assert [e for e in events if isinstance(e, Usage | Finish)] == [Usage(10, 0), Usage(0, 5), Finish()]


@pytest.mark.parametrize(
    ("envelope", "sent"),
    [
        (OkEnvelope(data={"sum": 5, "note": None}), '{"ok":true,"data":{"sum":5,"note":null}}'),
        (NeedsEnvelope(needs={"city": "Which city?"}), '{"ok":false,"needs":{"city":"Which city?"}}'),
    ],
)
async def test_a_tool_result_is_sent_as_the_one_rendering_every_dialect_uses(
    envelope: OkEnvelope | NeedsEnvelope, sent: str
) -> None:
    seen: list[dict[str, Any]] = []
    model = AnthropicModel("claude-sonnet-5-5", client=anthropic_client([text_turn("ok")], seen))
    call = ToolCall(id="toolu_a", name="calc.add", arguments={"a": 1})
    result = ToolResultMessage(call_id="toolu_a", name="calc.add", envelope=envelope)
    request = ModelRequest(
        messages=[UserMessage(content="add"), AssistantMessage(tool_calls=(call,)), result]
    )
    _ = [e async for e in model.stream(request)]
    assert seen[0]["messages"][-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": sent}],
    }
    assert sent in render_results("hermes", [result])  # a text dialect's model reads the same


async def test_tool_results_are_merged_into_one_user_turn_with_errors_flagged() -> None:
    seen: list[dict[str, Any]] = []
    model = AnthropicModel("claude-sonnet-5-5", client=anthropic_client([text_turn("ok")], seen))
    calls = (
        ToolCall(id="toolu_a", name="calc.add", arguments={"a": 1}),
        ToolCall(id="toolu_b", name="calc.add"),
    )
    refused = ErrorEnvelope(error=ErrorInfo(code="INVALID_ARGS", message="b is required", recoverable=True))
    request = ModelRequest(
        messages=[
            SystemMessage(content="ignored: the request's system prompt is sent"),
            UserMessage(content="add"),
            AssistantMessage(tool_calls=calls),
            ToolResultMessage(call_id="toolu_a", name="calc.add", envelope=refused),
            ToolResultMessage(call_id="toolu_b", name="calc.add", envelope=OkEnvelope(data=1)),
            UserMessage(content="Some of your output could not be read as tool calls: x"),
        ],
        tools=[add.spec],
    )
    assert [c async for c in model.stream(request)]
    assert "system" not in seen[0]
    assert seen[0]["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_a", "name": "calc_add", "input": {"a": 1}},
                {"type": "tool_use", "id": "toolu_b", "name": "calc_add", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "is_error": True,
                 "content": '{"ok":false,"error":{"code":"INVALID_ARGS","message":"b is required","recoverable":true}}'},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": '{"ok":true,"data":1}'},
                {"type": "text", "text": "Some of your output could not be read as tool calls: x"},
            ],
        },
    ]  # fmt: skip


async def test_with_a_text_dialect_the_model_streams_plain_text_and_offers_no_tools() -> None:
    seen: list[dict[str, Any]] = []
    call = '<tool_call>\n{"name": "calc.add", "arguments": {"a": 1, "b": 1}}\n</tool_call>'
    client = anthropic_client([text_turn(call[:20], call[20:]), text_turn("two")], seen)
    model = AnthropicModel("claude-sonnet-5-5", client=client, native_tools=False)
    assert model.native_dialect is None
    result = await Agent(model, [add], dialect="hermes").run("1+1?")
    assert (result.output, result.reason) == ("two", "no_calls")
    assert [m.envelope for m in result.messages if isinstance(m, ToolResultMessage)] == [OkEnvelope(data=2)]
    assert "tools" not in seen[0]
    assert "calc.add" in seen[0]["system"]  # taught in the system prompt
    assert seen[1]["messages"][1] == {"role": "assistant", "content": call}
    assert seen[1]["messages"][2]["role"] == "user"


def test_anthropic_names_and_keys_resolve_to_an_anthropic_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TETHER_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    chosen = model_from_name(None)
    assert isinstance(chosen, AnthropicModel)
    assert (chosen.name, chosen.native_dialect) == ("anthropic:claude-sonnet-5-5", "anthropic")
    text_only = model_from_name("anthropic:claude-haiku-4-5", native_tools=False)
    assert (text_only.name, text_only.native_dialect) == ("anthropic:claude-haiku-4-5", None)


def test_without_a_key_the_model_says_so_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(UserError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicModel("claude-sonnet-5-5")


async def test_a_stream_event_that_is_not_json_is_a_model_error_naming_the_server() -> None:
    broken = sse(message_start())[:-3] + b'"\n\n'  # the event's JSON cut short
    model = AnthropicModel("claude-sonnet-5-5", client=anthropic_client([broken], []))
    result = await Agent(model).run("hi")
    assert result.reason == "model_error"
    assert isinstance(result.error, ModelError)
    assert re.match(
        r"anthropic:claude-sonnet-5-5 at .*: the server streamed an event that is not JSON", str(result.error)
    )


async def test_a_web_page_instead_of_the_api_is_a_model_error_not_an_empty_answer() -> None:
    page = b"<html><body>It works!</body></html>"
    model = AnthropicModel("claude-sonnet-5-5", client=anthropic_client([page], [], "text/html"))
    result = await Agent(model).run("hi")
    assert result.reason == "model_error"
    assert isinstance(result.error, ModelError)
    assert "the server's answer (text/html) held no Messages API events" in str(result.error)
