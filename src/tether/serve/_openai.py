"""The OpenAI-compatible endpoint: `/v1/models` and `/v1/chat/completions`, streamed or not.

A model name maps either to an `Upstream` (pass-through tool calling: the client's `tools` are taught to a
model that has no tool API, in its dialect, and the calls read out of its text come back as standard
`tool_calls`) or to an `Agent` (tether runs the agent and its tools on the server; see `_openai_agents`).

`tool_choice` and `parallel_tool_calls` are honoured as far as a prompt can: `"none"` teaches no tools and
reads no calls; `"required"` and a named function are asked for in the tool prompt (a named function is
the only tool taught, and calls to any other are dropped); `parallel_tool_calls=false` asks for one call
and keeps only the first. A dropped or unreadable call is reported in tether's extension: the
`tether_errors` list of a whole answer, or `: tether-error {json}` SSE comment lines in a streamed one.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import httpx2
from fastapi import APIRouter, Depends, Request
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.responses import JSONResponse, Response

from tether.exceptions import UserError
from tether.execution import Principal
from tether.loop import Agent
from tether.serve._config import ServedAgent
from tether.serve._openai_agents import agent_completion
from tether.serve._openai_calls import CallStream
from tether.serve._openai_prompt import teach
from tether.serve._openai_upstream import Upstream, UpstreamStream
from tether.serve._openai_wire import ApiError, ChatRequest, Chunks, completion, request_schema
from tether.serve._routes import caller
from tether.serve._served import Served

__all__ = ["AgentFactory", "Upstream", "openai_router", "router"]

_log = logging.getLogger("tether.serve.openai")


AgentFactory = Callable[[Principal], Agent]
"""Makes the agent for one request, on behalf of the caller (e.g. with the caller's scopes)."""


def router(served: Served) -> APIRouter:
    """The `/v1` routes of `tether serve`'s app: its config's upstreams, its agents (each built for the
    caller, keeping its calls in the server's journal), behind the agent API's authentication."""
    agents: dict[str, AgentFactory] = {
        name: functools.partial(_build, agent, served) for name, agent in served.agents.items()
    }
    return openai_router(served.config.upstreams, agents, caller=caller)


def _build(agent: ServedAgent, served: Served, principal: Principal) -> Agent:
    return agent.build(principal, served.journal)


def openai_router(
    upstreams: Mapping[str, Upstream] | None = None,
    agents: Mapping[str, Agent | AgentFactory] | None = None,
    *,
    caller: Callable[..., Awaitable[Principal]] | None = None,
    client: httpx2.AsyncClient | None = None,
) -> APIRouter:
    """The `/v1` routes for these model names.

    Args:
        upstreams: Model name -> the OpenAI-compatible server, model id and dialect behind it.
        agents: Model name -> an agent run on the server with its own tools, or a function making one for the
            caller's principal.
        caller: A FastAPI dependency answering the request's principal (it authenticates, and may refuse with
            its own 401 or 429); default: every request is the local principal.
        client: The HTTP client for upstream requests (default: one shared by the router's requests).

    Raises:
        UserError: A name that is both an upstream and an agent.
    """
    upstreams = dict(upstreams or {})
    agents = dict(agents or {})
    if clash := sorted(set(upstreams) & set(agents)):
        raise UserError(f"model names {clash} are both an upstream and an agent: give each one name only")
    http = client or httpx2.AsyncClient(
        limits=httpx2.Limits(max_connections=None, max_keepalive_connections=256)
    )
    api = APIRouter(prefix="/v1", tags=["openai"])
    who: Any = Depends(caller or _local)  # a default, not an annotation: FastAPI reads those from the module

    @api.get("/models")
    async def list_models(  # pyright: ignore[reportUnusedFunction] - a route
        principal: Principal = who,
    ) -> dict[str, Any]:
        """The model names served: upstreams and agents."""
        names = sorted([*upstreams, *agents])
        return {
            "object": "list",
            "data": [{"id": n, "object": "model", "created": 0, "owned_by": "tether"} for n in names],
        }

    @api.post(
        "/chat/completions",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": request_schema()}},
            }
        },
    )
    async def chat_completions(  # pyright: ignore[reportUnusedFunction] - a route
        request: Request, principal: Principal = who
    ) -> Response:
        """Chat Completions, with tool calling for models that have none (see the module's docstring)."""
        try:
            chat = await _read(request)
            if (agent := agents.get(chat.model)) is not None:
                return await agent_completion(agent if isinstance(agent, Agent) else agent(principal), chat)
            upstream = upstreams.get(chat.model)
            if upstream is None:
                raise ApiError(
                    404,
                    f"the model {chat.model!r} does not exist here",
                    code="model_not_found",
                    param="model",
                    suggestion=f"Use one of {sorted([*upstreams, *agents])} (GET /v1/models lists them).",
                )
            return await _pass_through(http, upstream, chat)
        except ApiError as e:
            return JSONResponse(e.body(), status_code=e.status)

    return api


async def _local() -> Principal:
    return Principal()


async def _read(request: Request) -> ChatRequest:
    try:
        body = await request.json()
    except ValueError as e:
        raise ApiError(400, f"the request body is not JSON: {e}") from e
    try:
        return ChatRequest.model_validate(body)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ApiError(
            400, f"{where}: {first['msg']}" + (f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""),
            param=where or None,
        ) from e  # fmt: skip


async def _pass_through(http: httpx2.AsyncClient, upstream: Upstream, chat: ChatRequest) -> Response:
    taught = teach(chat, upstream.dialect)
    body = {**chat.passed_on(), "model": upstream.model, "messages": taught.messages, "stream": True}
    if chat.stream_options is not None or not chat.stream:
        body["stream_options"] = {"include_usage": True}
    stream = UpstreamStream(http, upstream, body)
    await stream.open()
    calls = CallStream(
        upstream.dialect,
        taught.specs,
        parallel=chat.parallel_tool_calls,
        only=taught.only,
        reasoning_open=upstream.reasoning_open,
    )
    if chat.stream:
        usage = chat.stream_options is not None and chat.stream_options.include_usage
        return EventSourceResponse(_streamed(stream, calls, chat.model, usage), ping=15)
    try:
        return JSONResponse(await _whole(stream, calls, chat.model))
    finally:
        await stream.aclose()


async def _whole(stream: UpstreamStream, calls: CallStream, model: str) -> dict[str, Any]:
    content: list[str] = []
    reasoning: list[str] = []
    finish, usage = "stop", None
    async for piece in stream.pieces():
        if piece.reasoning:
            reasoning.append(piece.reasoning)
        for delta in calls.feed(piece.text):
            _gather(delta, content, reasoning)
        finish = piece.finish_reason or finish
        usage = piece.usage or usage
    for delta in calls.close():
        _gather(delta, content, reasoning)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if calls.tool_calls:
        message["tool_calls"] = calls.tool_calls
        finish = "tool_calls"
    body = completion(model, message, finish, usage)
    if calls.errors:
        body["tether_errors"] = calls.errors
    return body


def _gather(delta: dict[str, Any], content: list[str], reasoning: list[str]) -> None:
    if "content" in delta:
        content.append(delta["content"])
    elif "reasoning_content" in delta:
        reasoning.append(delta["reasoning_content"])
    # tool_calls deltas: `calls.tool_calls` holds the whole calls


async def _streamed(
    stream: UpstreamStream, calls: CallStream, model: str, usage: bool
) -> AsyncIterator[bytes]:
    # one write per upstream piece, whatever it became (the deltas of a piece go out together)
    out = Chunks(model)
    finish, last_usage, reported = "stop", None, 0
    try:
        yield out.delta({"role": "assistant", "content": ""})
        async for piece in stream.pieces():
            events = [out.delta(delta) for delta in calls.feed(piece.text)]
            if piece.reasoning:
                events.insert(0, out.delta({"reasoning_content": piece.reasoning}))
            if len(calls.errors) > reported:
                events += [out.comment("tether-error", e) for e in calls.errors[reported:]]
                reported = len(calls.errors)
            finish = piece.finish_reason or finish
            last_usage = piece.usage or last_usage
            if events:
                yield b"".join(events) if len(events) > 1 else events[0]
        events = [out.delta(delta) for delta in calls.close()]
        events += [out.comment("tether-error", e) for e in calls.errors[reported:]]
        events.append(out.delta({}, "tool_calls" if calls.tool_calls else finish))
        if usage:
            events.append(out.usage(last_usage))
        yield b"".join(events)
    except ApiError as e:
        yield out.error(e)
    except Exception as e:  # the stream is already a 200: say what broke in the stream's own error form
        _log.exception("the /v1/chat/completions stream failed")
        yield out.error(ApiError(500, f"internal error ({type(e).__name__})", type="server_error"))
    finally:
        await stream.aclose()
    yield out.DONE
