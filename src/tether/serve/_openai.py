"""The OpenAI-compatible endpoint: `/v1/models` and `/v1/chat/completions`, streamed or not.

A model name maps either to an `Upstream` (pass-through tool calling: the client's `tools` are taught to a
model that has no tool API, in its dialect, and the calls read out of its text come back as standard
`tool_calls`) or to an `Agent` (tether runs the agent and its tools on the server; see `_openai_agents`).

`tool_choice` and `parallel_tool_calls` are honoured:
- `"none"` teaches no tools; calls the model writes anyway are read and dropped, so neither they nor its
  reasoning reach `content`.
- `"required"` and a named function are asked for in the tool prompt (a named function is the only tool
  taught, and calls to any other are dropped), then enforced: an answer without the call is retried, with
  the answer and a user message insisting on the call, up to `TOOL_CHOICE_RETRIES` times; then a 502
  `tool_choice_unmet`. A streamed answer is held back until its first call, so a retry never shows.
- `parallel_tool_calls=false` asks for one call and keeps only the first.
A request with no tools is read in the dialect too: its reasoning is `reasoning_content`, and calls the model
writes anyway are dropped, as under `"none"`.
A dropped or unreadable call is reported in tether's extension: the `tether_errors` list of a whole answer,
or `: tether-error {json}` SSE comment lines in a streamed one.

A client that disconnects before a whole (non-streamed) answer is ready cancels the upstream request (or
the agent's run); a streamed one does the same by closing its stream.
"""

from __future__ import annotations

import contextlib
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
from tether.serve._disconnect import ClientGone, unless_disconnected
from tether.serve._openai_agents import agent_completion
from tether.serve._openai_calls import CallStream
from tether.serve._openai_prompt import Taught, insist, teach
from tether.serve._openai_upstream import Piece, Upstream, UpstreamStream
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
        client: The HTTP client for upstream requests (default: one shared by the router's requests, closed
            when the app including the router shuts down).

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

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        if client is None:  # the router's own client; one given is its owner's to close
            await http.aclose()

    api = APIRouter(prefix="/v1", tags=["openai"], lifespan=lifespan)
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
                built = agent if isinstance(agent, Agent) else agent(principal)
                return await agent_completion(built, chat, request)
            upstream = upstreams.get(chat.model)
            if upstream is None:
                raise ApiError(
                    404,
                    f"the model {chat.model!r} does not exist here",
                    code="model_not_found",
                    param="model",
                    suggestion=f"Use one of {sorted([*upstreams, *agents])} (GET /v1/models lists them).",
                )
            return await _pass_through(http, upstream, chat, request)
        except ApiError as e:
            return JSONResponse(e.body(), status_code=e.status)
        except ClientGone:
            return Response(status_code=499)  # nobody reads it: the client closed the connection

    return api


async def _local() -> Principal:
    return Principal()


async def _read(request: Request) -> ChatRequest:
    try:
        body = await request.json()
    except ValueError as e:
        raise ApiError(400, f"the request body is not JSON: {e}") from e
    except RecursionError:
        raise ApiError(
            400,
            "the request body nests JSON too deeply to read",
            suggestion="Send a flatter JSON body (a few hundred levels at most).",
        ) from None
    try:
        return ChatRequest.model_validate(body)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ApiError(
            400, f"{where}: {first['msg']}" + (f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""),
            param=where or None,
        ) from e  # fmt: skip


async def _pass_through(
    http: httpx2.AsyncClient, upstream: Upstream, chat: ChatRequest, request: Request
) -> Response:
    taught = teach(chat, upstream.dialect)
    messages = taught.messages
    for attempt in range(1 + (TOOL_CHOICE_RETRIES if taught.required else 0)):
        body = {**chat.passed_on(), "model": upstream.model, "messages": messages, "stream": True}
        if chat.stream_options is not None or not chat.stream:
            body["stream_options"] = {"include_usage": True}
        answer = _Answer(UpstreamStream(http, upstream, body), upstream, taught, chat.parallel_tool_calls)
        handed_on = False
        try:
            if chat.stream:
                await answer.stream.open()
                if not taught.required or await answer.read_until_a_call():
                    usage = chat.stream_options is not None and chat.stream_options.include_usage
                    handed_on = True  # the response's generator closes the upstream stream
                    return EventSourceResponse(_streamed(answer, chat.model, usage), ping=15)
            else:
                whole = await unless_disconnected(request, answer.whole(chat.model))
                if whole is not None:
                    return JSONResponse(whole)
        finally:
            if not handed_on:
                await answer.stream.aclose()
        messages = [*messages, *answer.retry_messages(taught)]
        _log.info("upstream %r answered without the required call (attempt %d)", upstream.model, attempt + 1)
    raise _unmet(taught, upstream)


TOOL_CHOICE_RETRIES = 2
"""How many times an upstream that answered without the call `tool_choice` requires is asked again."""


def _unmet(taught: Taught, upstream: Upstream) -> ApiError:
    wanted = f"the function {taught.only!r}" if taught.only is not None else "a function"
    return ApiError(
        502,
        f"upstream {upstream.model!r} did not call {wanted} as tool_choice requires, "
        f"in {1 + TOOL_CHOICE_RETRIES} attempts",
        type="upstream_error",
        code="tool_choice_unmet",
        param="tool_choice",
        suggestion="Retry, use tool_choice='auto' and handle a reply without calls, or serve a model that "
        f"follows the {upstream.dialect!r} tool format more reliably.",
    )


class _Answer:
    """One upstream answer read as it streams: the deltas of each piece, its calls, finish reason and usage."""

    def __init__(self, stream: UpstreamStream, upstream: Upstream, taught: Taught, parallel: bool):
        self.stream = stream
        self.required = taught.required
        self.calls = CallStream(
            upstream.dialect,
            taught.specs,
            parallel=parallel,
            only=taught.only,
            none=taught.none,
            reasoning_open=upstream.reasoning_open,
        )
        self.text: list[str] = []
        """The model's raw text so far (for the retry's history)."""
        self.finish = "stop"
        self.usage: dict[str, Any] | None = None
        self._pieces: AsyncIterator[Piece] | None = None
        self._held: list[list[dict[str, Any]]] = []
        """Deltas read while looking for a call, replayed before the rest."""

    async def steps(self) -> AsyncIterator[list[dict[str, Any]]]:
        """The deltas of each upstream piece (reasoning first), then the parser's last ones."""
        for held in self._held:
            yield held
        self._held = []
        if self._pieces is None:
            self._pieces = self.stream.pieces()
        async for piece in self._pieces:
            yield self._step(piece)
        yield self.calls.close()

    async def read_until_a_call(self) -> bool:
        """Read (holding the deltas back) until the answer's first call: False if it ended without one."""
        self._pieces = self.stream.pieces()
        async for piece in self._pieces:
            self._held.append(self._step(piece))
            if self.calls.tool_calls:
                return True
        self._held.append(self.calls.close())
        return bool(self.calls.tool_calls)

    async def whole(self, model: str) -> dict[str, Any] | None:
        """The `chat.completion`; None when it lacks the call `tool_choice` requires."""
        await self.stream.open()
        content: list[str] = []
        reasoning: list[str] = []
        async for deltas in self.steps():
            for delta in deltas:
                _gather(delta, content, reasoning)
        if self.required and not self.calls.tool_calls:
            return None
        message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
        if reasoning:
            message["reasoning_content"] = "".join(reasoning)
        finish = self.finish
        if self.calls.tool_calls:
            message["tool_calls"] = self.calls.tool_calls
            finish = "tool_calls"
        body = completion(model, message, finish, self.usage)
        if self.calls.errors:
            body["tether_errors"] = self.calls.errors
        return body

    def retry_messages(self, taught: Taught) -> list[dict[str, Any]]:
        """The answer without its call, and the user's insistence on one, for the next attempt."""
        return [
            {"role": "assistant", "content": "".join(self.text)},
            {"role": "user", "content": insist(taught)},
        ]

    def _step(self, piece: Piece) -> list[dict[str, Any]]:
        self.text.append(piece.text)
        deltas = self.calls.feed(piece.text)
        if piece.reasoning:
            deltas.insert(0, {"reasoning_content": piece.reasoning})
        self.finish = piece.finish_reason or self.finish
        self.usage = piece.usage or self.usage
        return deltas


def _gather(delta: dict[str, Any], content: list[str], reasoning: list[str]) -> None:
    if "content" in delta:
        content.append(delta["content"])
    elif "reasoning_content" in delta:
        reasoning.append(delta["reasoning_content"])
    # tool_calls deltas: `calls.tool_calls` holds the whole calls


async def _streamed(answer: _Answer, model: str, usage: bool) -> AsyncIterator[bytes]:
    # one write per upstream piece, whatever it became (the deltas of a piece go out together)
    out = Chunks(model)
    calls = answer.calls
    reported = 0
    try:
        yield out.delta({"role": "assistant", "content": ""})
        async for deltas in answer.steps():
            events = [out.delta(delta) for delta in deltas]
            if len(calls.errors) > reported:
                events += [out.comment("tether-error", e) for e in calls.errors[reported:]]
                reported = len(calls.errors)
            if events:
                yield b"".join(events) if len(events) > 1 else events[0]
        events = [out.delta({}, "tool_calls" if calls.tool_calls else answer.finish)]
        if usage:
            events.append(out.usage(answer.usage))
        yield b"".join(events)
    except ApiError as e:
        yield out.error(e)
    except Exception as e:  # the stream is already a 200: say what broke in the stream's own error form
        _log.exception("the /v1/chat/completions stream failed")
        yield out.error(ApiError(500, f"internal error ({type(e).__name__})", type="server_error"))
    finally:
        await answer.stream.aclose()
    yield out.DONE
