"""The agent API (`/api`): agents, sessions, messages and their runs' event streams, needs, cancel."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse
from starlette.responses import Response

from tether.execution import Principal
from tether.loop import Agent, Session
from tether.serve._config import ServedAgent
from tether.serve._errors import ApiError
from tether.serve._history import chat_messages
from tether.serve._index import SessionRow
from tether.serve._runs import RunBuffer, Runs
from tether.serve._served import Served
from tether.tools import redact
from tether.types import ChatMessageV2, Message, NeedsEnvelope, ToolResultMessage

__all__ = ["Caller", "State", "caller", "router", "served_state"]

NDJSON = "application/x-ndjson"
SHUTDOWN_GRACE_S = 2.0
"""How long a stream may take to deliver its cancelled run's last events when the server shuts down."""
MAX_CONTENT = 100_000
"""Characters a message may hold."""


class AgentInfo(BaseModel):
    name: str
    description: str


class NewSession(BaseModel):
    agent: str | None = None
    """The agent's name; default: the server's first agent."""


class SessionInfo(BaseModel):
    session_id: str
    agent: str
    title: str
    created_at: float
    updated_at: float
    status: str
    """`idle`, `running`, `needs` (a tool waits for the user's answer), `cancelled` or `error`."""


class NewMessage(BaseModel):
    content: str = Field(min_length=1, max_length=MAX_CONTENT)


class NeedsAnswer(BaseModel):
    call_id: str = Field(min_length=1)
    values: dict[str, Any] = Field(min_length=1)
    """The missing fields, by name."""


class Cancelled(BaseModel):
    cancelled: bool
    """Whether a run was running (and is now stopping)."""


_STREAM_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The run's events (agent_streaming_events.v1): SSE by default, each with `id: <seq>`; "
        "NDJSON (`{seq, ...event}` a line) with `Accept: application/x-ndjson`.",
        "content": {"text/event-stream": {}, NDJSON: {}},
    }
}


def served_state(request: Request) -> Served:
    """What the app serves (its config, stores and runs)."""
    return request.app.state.served


State = Annotated[Served, Depends(served_state)]


async def caller(request: Request, authorization: Annotated[str | None, Header()] = None) -> Principal:
    """The request's principal (401 without a valid key when keys are configured; 429 over its rate)."""
    return await served_state(request).keys.principal(authorization)


Caller = Annotated[Principal, Depends(caller)]
"""A route parameter that is the caller's principal: the OpenAI-compatible routes use it too."""


router = APIRouter(prefix="/api")
"""The agent API; `create_app` includes it."""


async def _owned(served: Served, session_id: str, principal: Principal) -> SessionRow:
    """The session, if this principal owns it; another's is answered exactly as a missing one."""
    row = await anyio.to_thread.run_sync(served.index.get, session_id)
    if row is None or row.owner != principal.id:
        raise ApiError(404, "NOT_FOUND", f"No session {session_id!r}.", "List yours with GET /api/sessions.")
    return row


@router.get("/agents")
async def agents(principal: Caller, served: State) -> list[AgentInfo]:
    """The agents this server offers."""
    return [AgentInfo(name=a.name, description=a.description) for a in served.agents.values()]


@router.post("/sessions", status_code=201)
async def create_session(
    body: NewSession,
    principal: Caller,
    served: State,
    response: Response,
    idempotency_key: Annotated[str | None, Header(max_length=256)] = None,
) -> SessionInfo:
    """Start a conversation with an agent. With `Idempotency-Key`, a retry returns the same session (200)."""
    name = body.agent or next(iter(served.agents))
    if name not in served.agents:
        raise ApiError(
            404, "UNKNOWN_AGENT", f"No agent {name!r}.", f"Use one of: {', '.join(served.agents)}."
        )
    assert principal.id is not None
    row, new = await anyio.to_thread.run_sync(served.index.create, principal.id, name, idempotency_key)
    if not new:
        if row.agent != name:
            raise ApiError(
                409, "IDEMPOTENCY_KEY_REUSED",
                f"Idempotency-Key {idempotency_key!r} already made a session with agent {row.agent!r}.",
                "Use a new key for a different request.",
            )  # fmt: skip
        response.status_code = 200
    return SessionInfo(**row.public())


@router.get("/sessions")
async def sessions(principal: Caller, served: State) -> list[SessionInfo]:
    """Your sessions, most recently updated first."""
    assert principal.id is not None
    rows = await anyio.to_thread.run_sync(served.index.owned_by, principal.id)
    return [SessionInfo(**r.public()) for r in rows]


@router.get("/sessions/{session_id}")
async def session(session_id: str, principal: Caller, served: State) -> SessionInfo:
    return SessionInfo(**(await _owned(served, session_id, principal)).public())


@router.get("/sessions/{session_id}/messages")
async def messages(session_id: str, principal: Caller, served: State) -> list[ChatMessageV2]:
    """The conversation as chat_message.v2 messages, with the record of every tool call."""
    row = await _owned(served, session_id, principal)
    stored = await anyio.to_thread.run_sync(served.store.load, session_id)
    prompts = await anyio.to_thread.run_sync(served.index.prompts, session_id)
    agent = served.agents.get(row.agent)
    built = agent.build(principal, served.journal) if agent is not None else None
    toolset = built.toolset if built is not None else None
    return chat_messages(
        stored,
        prompts,
        lambda name: None if toolset is None or (t := toolset.get(name)) is None else t.spec,
        planned=built is not None and built.responder is not None,
    )


async def _start(
    served: Served,
    request: Request,
    row: SessionRow,
    principal: Principal,
    prompt: str,
    title: str,
    *,
    answer: _Answer | None = None,
) -> Response:
    """Take the session and start the run; the response follows it. With `answer`, the prompt holds values
    the user gave for a `needs` that are stored as `***` (the run gets `prompt` itself)."""
    built = answer.agent if answer is not None else None
    shown = answer.shown if answer is not None else prompt
    stored = await anyio.to_thread.run_sync(_take, served, row.session_id, shown, title)
    if built is None:
        try:
            built = _served_agent(served, row).build(principal, served.journal)
        except BaseException:
            await anyio.to_thread.run_sync(served.index.release, row.session_id, "error")
            raise
    secrets = set(answer.values) if answer is not None else set[str]()
    buffer = served.runs.start(Session(row.session_id, served.store, stored, secrets), built, prompt)
    return _stream(request, served, buffer, 0)


def _served_agent(served: Served, row: SessionRow) -> ServedAgent:
    agent = served.agents.get(row.agent)
    if agent is None:
        raise ApiError(
            409, "UNKNOWN_AGENT", f"The session's agent {row.agent!r} is no longer served.",
            "Start a new session with one of GET /api/agents.",
        )  # fmt: skip
    return agent


def _take(served: Served, session_id: str, prompt: str, title: str) -> list[Message]:
    """Hold the session for a run and read its conversation: one trip to a worker thread, as the first
    event waits for it."""
    if not served.index.hold(session_id, prompt, title):
        raise ApiError(
            409, "RUN_ACTIVE", "A run is already active on this session.",
            f"Follow it with GET /api/sessions/{session_id}/events, or cancel it first.",
        )  # fmt: skip
    try:
        return served.store.load(session_id)
    except BaseException:
        served.index.release(session_id, "error")
        raise


@router.post("/sessions/{session_id}/messages", responses=_STREAM_DOC)
async def post_message(
    session_id: str, body: NewMessage, request: Request, principal: Caller, served: State
) -> Response:
    """Send a message: the response streams the run it starts (409 while another run is active)."""
    row = await _owned(served, session_id, principal)
    return await _start(served, request, row, principal, body.content, body.content)


@router.get(
    "/sessions/{session_id}/events",
    responses={**_STREAM_DOC, 204: {"description": "The run has ended and every event was seen."}},
)
async def events(
    session_id: str,
    request: Request,
    principal: Caller,
    served: State,
    after: Annotated[int | None, Query(ge=0, description="Replay the events after this seq.")] = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> Response:
    """Reconnect: the current (or last) run's events after `Last-Event-ID` (or `after`), then live ones; 204
    when the run has ended and every event was seen (a browser's EventSource then stops reconnecting)."""
    row = await _owned(served, session_id, principal)
    buffer = served.runs.buffers.get(session_id)
    if buffer is None and row.held():
        raise ApiError(
            409, "RUN_ON_ANOTHER_WORKER", "This session's run streams from another worker of this server.",
            "Route a session's requests to one worker (sticky by session id), or read /messages when it ends.",
        )  # fmt: skip
    if buffer is None:
        raise ApiError(
            404, "NO_RUN", "This session has no run to follow on this server.",
            f"Its history is at GET /api/sessions/{session_id}/messages.",
        )  # fmt: skip
    seq = after if after is not None else _seq(last_event_id)
    if buffer.done and seq >= len(buffer.events):
        return Response(status_code=204)  # nothing more will come; an EventSource stops reconnecting
    return _stream(request, served, buffer, seq)


@router.post("/sessions/{session_id}/needs", responses=_STREAM_DOC)
async def answer_needs(
    session_id: str, body: NeedsAnswer, request: Request, principal: Caller, served: State
) -> Response:
    """Answer a tool's `needs` with the missing fields; the response streams the run that continues."""
    row = await _owned(served, session_id, principal)
    stored = await anyio.to_thread.run_sync(served.store.load, session_id)
    asked = next(
        (m for m in reversed(stored) if isinstance(m, ToolResultMessage) and m.call_id == body.call_id),
        None,
    )
    if asked is None or not isinstance(asked.envelope, NeedsEnvelope):
        raise ApiError(
            409, "NO_SUCH_NEEDS", f"No call {body.call_id!r} in this session is waiting for input.",
            "Answer the `call_id` of the latest `needs` event.",
        )  # fmt: skip
    missing = sorted(set(asked.envelope.needs) - set(body.values))
    if missing:
        raise ApiError(
            422, "NEEDS_INCOMPLETE", f"Missing: {', '.join(missing)}.",
            f"Send every field the call asked for: {', '.join(sorted(asked.envelope.needs))}.",
        )  # fmt: skip
    # the tool's input schema says which of its fields are secret: their answers are stored as `***`
    built = _served_agent(served, row).build(principal, served.journal)
    tool = built.executor.toolset.get(asked.name)
    shown = redact(body.values, tool.spec.input_schema if tool is not None else None)
    answer = _Answer(
        agent=built,
        shown=_answer_prompt(asked.name, body.call_id, shown),
        values=tuple(
            text for key, value in body.values.items() if shown[key] != value for text in _texts(value)
        ),
    )
    prompt = _answer_prompt(asked.name, body.call_id, body.values)
    return await _start(served, request, row, principal, prompt, "", answer=answer)


@dataclass(frozen=True, slots=True)
class _Answer:
    """An answer to a `needs`: the agent that runs it, and what of it may be stored."""

    agent: Agent
    """The run's agent (built to read the tool's schema)."""
    shown: str
    """The prompt as it may be stored (secret fields `***`)."""
    values: tuple[str, ...]
    """The secret values, as text."""


def _answer_prompt(tool: str, call_id: str, values: dict[str, Any]) -> str:
    return (
        f"The user answered what {tool} needed (call {call_id}): "
        f"{json.dumps(values, ensure_ascii=False)}. Call it again with these values."
    )


def _texts(value: Any) -> list[str]:
    """Every string and number in a secret JSON value, as the text a message may show it as."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [json.dumps(value)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _texts(item)]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]  # pyright: ignore[reportUnknownVariableType]
    return []


@router.post("/sessions/{session_id}/cancel", status_code=202)
async def cancel(session_id: str, principal: Caller, served: State) -> Cancelled:
    """Stop the session's run: the model stream and running tools stop, every call is answered (its
    envelope says it was cancelled), and the session takes the next message."""
    await _owned(served, session_id, principal)
    if served.runs.cancel(session_id):
        return Cancelled(cancelled=True)
    # the run may be another worker's: it looks for such requests every second
    return Cancelled(cancelled=await anyio.to_thread.run_sync(served.index.ask_cancel, session_id))


def _seq(last_event_id: str | None) -> int:
    if last_event_id is None or not last_event_id.strip():
        return 0
    if not _SEQ(last_event_id.strip()):  # not str.isdigit: "²" is a digit int() cannot read
        raise ApiError(
            400, "BAD_LAST_EVENT_ID", f"Last-Event-ID must be an event's seq (a number), not {last_event_id!r}.",
            "Send the `id` of the last event you received.",
        )  # fmt: skip
    return int(last_event_id)


_SEQ = re.compile(r"[0-9]{1,18}").fullmatch


def _stream(request: Request, served: Served, buffer: RunBuffer, after: int) -> Response:
    """The buffer's events after `after` as SSE, or NDJSON when the client asks for it."""
    runs = served.runs
    shutdown = anyio.Event()

    async def follow() -> AsyncIterator[tuple[int, dict[str, Any]]]:
        runs.watch(buffer)
        stopping = asyncio.create_task(_cancel_on(shutdown, runs, buffer.session_id))
        try:
            async for item in buffer.follow(after):
                yield item
        finally:
            stopping.cancel()
            runs.unwatch(buffer)

    if NDJSON in request.headers.get("accept", ""):

        async def lines() -> AsyncIterator[bytes]:
            async for seq, event in follow():
                yield json.dumps({"seq": seq, **event}).encode() + b"\n"

        return StreamingResponse(lines(), media_type=NDJSON)

    async def sse() -> AsyncIterator[dict[str, str]]:
        async for seq, event in follow():
            yield {"id": str(seq), "event": str(event["event"]), "data": json.dumps(event)}

    # at shutdown the run is cancelled and the stream ends with its `error` and `on_chain_end`, not cut off
    return EventSourceResponse(
        sse(), ping=15, shutdown_event=shutdown, shutdown_grace_period=SHUTDOWN_GRACE_S
    )


async def _cancel_on(shutdown: anyio.Event, runs: Runs, session_id: str) -> None:
    await shutdown.wait()
    runs.cancel(session_id)
