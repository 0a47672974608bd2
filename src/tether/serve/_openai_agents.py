"""An agent served as a model: tether runs it, tools and all, on the server; the client gets its answer.

tether's events ride along where the official clients do not look: in a streamed answer each event is an
SSE comment line, `: tether-event {json}` (SSE comments are skipped by every conforming client, the
`openai` SDK included); a whole answer carries them in a top-level `tether_events` list, which the SDK
keeps as an extra field (`completion.model_extra["tether_events"]`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tether.loop import Agent, RunResult
from tether.serve._disconnect import unless_disconnected
from tether.serve._openai_wire import ApiError, ChatRequest, Chunks, completion
from tether.types import AssistantMessage, ChatModelStreamEvent, Event, Message, UserMessage

__all__ = ["agent_completion"]

_DONE = object()


async def agent_completion(agent: Agent, request: ChatRequest, http: Request) -> Response:
    """Run `agent` on the request's last user message, the messages before it as history. A client that
    disconnects before the answer cancels the run, its model and tools included.

    Raises:
        ApiError: 400 for a request an agent cannot take (tools of the client's own, a last message that is
            not the user's); 502 when the agent's model failed (non-streamed answers).
        ClientGone: The client of a non-streamed request disconnected; the run was cancelled.
    """
    prompt, history = _turn(request)
    if not request.stream:
        events: list[Event] = []
        result = await unless_disconnected(http, agent.run(prompt, history=history, on_event=events.append))
        _raise_model_error(result)
        message = {"role": "assistant", "content": result.chat_message().content}
        body = completion(request.model, message, "stop", None)
        body["tether_events"] = [e.model_dump(mode="json") for e in events]
        return JSONResponse(body)
    return EventSourceResponse(_stream(agent, request.model, prompt, history), ping=15)


async def _stream(agent: Agent, model: str, prompt: str, history: list[Message]) -> AsyncIterator[bytes]:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    out = Chunks(model)

    async def run() -> RunResult:
        try:
            return await agent.run(prompt, history=history, on_event=queue.put_nowait)
        finally:
            queue.put_nowait(_DONE)

    task = asyncio.create_task(run())
    try:
        yield out.delta({"role": "assistant", "content": ""})
        while (event := await queue.get()) is not _DONE:
            sent = out.comment("tether-event", event.model_dump(mode="json"))
            if isinstance(event, ChatModelStreamEvent) and event.data:
                sent += out.delta({"content": event.data})
            yield sent
        result = await task
        try:
            _raise_model_error(result)
        except ApiError as e:
            yield out.error(e)
        else:
            yield out.delta({}, "stop")
        yield out.DONE
    finally:
        task.cancel()  # a client that goes away stops the run (the model stream and running tools)


def _turn(request: ChatRequest) -> tuple[str, list[Message]]:
    if request.tools:
        raise ApiError(
            400,
            f"{request.model!r} is an agent that runs its own tools on the server: send no `tools`",
            param="tools",
        )
    *before, last = request.messages
    if last.role != "user":
        raise ApiError(
            400, "an agent answers a user message: the last message must be the user's", param="messages"
        )
    history: list[Message] = []
    for m in before:
        if m.role == "user":
            history.append(UserMessage(content=m.text()))
        elif m.role == "assistant" and m.text():
            history.append(AssistantMessage(content=m.text()))
        # system and tool messages: the agent has its own instructions and runs its own tools
    return last.text(), history


def _raise_model_error(result: RunResult) -> None:
    if result.reason == "model_error":
        raise ApiError(
            502,
            f"the agent's model failed: {result.error}",
            type="upstream_error",
            code="model_error",
        )
