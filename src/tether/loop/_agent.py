"""The agent loop: model turn -> parse (while streaming) -> execute -> results back -> repeat until done."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio

from tether._literals import loads
from tether.dialects import (
    CallCompleted,
    CallDelta,
    ParseEvent,
    ParseResult,
    ReasoningDelta,
    StreamParser,
    TextDelta,
    ToolIndex,
    render_results,
    render_tools,
    stream_parser,
)
from tether.exceptions import UserError
from tether.execution import Executor, Policy, Principal, Run, SessionLog
from tether.execution._suggestions import stopped_suggestion
from tether.loop._context import context_sources, with_context
from tether.loop._core import CORE_TOOL_NAMES, core_tools
from tether.loop._modes import Mode, ModeChooser
from tether.loop._session import Session
from tether.loop._termination import EndTurn, FinalResponse, Limits, NoCalls, Termination
from tether.models import Model, ModelChunk, ModelRequest
from tether.tools import AbstractToolset, ArgumentValidator, Tool, ToolsLike, as_toolset
from tether.types import (
    AssistantMessage,
    ChainEndEvent,
    ChainStartEvent,
    ChatEvent,
    ChatModelStartEvent,
    ChatModelStreamEvent,
    ErrorCode,
    ErrorEnvelope,
    ErrorEvent,
    ErrorInfo,
    Event,
    Message,
    NeedsEnvelope,
    NeedsEvent,
    OkEnvelope,
    OpenUrlEvent,
    SpeechEvent,
    SystemMessage,
    ToolCall,
    ToolEndEvent,
    ToolResultMessage,
    ToolSpec,
    ToolStartEvent,
    UserMessage,
)

__all__ = ["Agent", "RunResult"]

RESPOND = (
    "Now write the reply to the user from the conversation and the tool results above. Do not call tools."
)

AnyEnvelope = OkEnvelope | NeedsEnvelope | ErrorEnvelope
EventHandler = Callable[[Event], Awaitable[None] | None]
STREAMABLE = frozenset({"none", "idempotent"})
"""Side-effect classes whose calls may start while the model is still streaming."""


@dataclass(slots=True)
class RunResult:
    """What a run produced: its final output, why it ended, the conversation and every event."""

    output: Any
    reason: str
    messages: list[Message]
    events: list[Event] = field(default_factory=list[Event])
    tool_start_lag_s: list[float] = field(default_factory=list[float])
    """For each call started during streaming: seconds from its completion in the stream to its start."""


class Agent:
    """A model, a dialect, tools and the rules of the loop. `run` needs an asyncio event loop
    (`asyncio.run`, or `anyio.run` with its default backend).

    Args:
        model: The model to drive (`ScriptedModel`/`FunctionModel` in tests, a provider in production).
        tools: The agent's own tools; the core tools its termination policy needs are added.
        dialect: How tool calls are written: a text dialect (`json_calls`, `fenced`, `hermes`, ...) or the
            model's native one (the default when the model has one, else `json_calls`).
        termination: `NoCalls()` (default), `EndTurn()` (seed 000) or `FinalResponse(schema)` (seed 003).
        limits: Iterations, tool calls, tokens, wall time and the per-tool retry budget.
        system_prompt: Your instructions; the dialect's tool prompt is appended for text dialects.
        policy: Executor policy (ignored when `executor` is given).
        executor: A configured executor, e.g. with a SQL journal.
        principal: On whose behalf tools run (scopes, rate limits).
        streaming_execution: Start calls to tools without side effects as soon as the stream completes
            them, while the model keeps generating; mutating tools always wait for the end of the turn.
        mode: `talk_first` (stream text at once), `act_first` (hold a turn's text until its tools finish or
            need input), or a function choosing one per prompt, e.g. `actionable_intent` (seed 002).
        responder: A second model that writes the user-facing reply once the tool loop is done (planner ->
            executor -> responder); `model` is then the planner. Often a larger model than the planner.
        session_log: Append every answered call to this markdown file, MOOLLM's `session-log.md` (seed 001):
            a YAML block per call, with its `why` and comments, and one per result.
    """

    def __init__(
        self,
        model: Model,
        tools: ToolsLike = None,
        *,
        dialect: str | None = None,
        termination: Termination | None = None,
        limits: Limits | None = None,
        system_prompt: str = "",
        policy: Policy | None = None,
        executor: Executor | None = None,
        principal: Principal | None = None,
        streaming_execution: bool = True,
        mode: Mode | ModeChooser = "talk_first",
        responder: Model | None = None,
        session_log: str | Path | None = None,
    ):
        self.model = model
        self.termination: Termination = termination or NoCalls()
        self.limits = limits or Limits()
        self.dialect = dialect or model.native_dialect or "json_calls"
        self.native = self.dialect == model.native_dialect
        core = _core_names(self.termination)
        self.toolset: AbstractToolset = as_toolset(tools) | core_tools(*core) if core else as_toolset(tools)
        if executor is not None and session_log is not None:
            raise UserError(
                "Agent(session_log=...) cannot add a log to an executor you configured: pass "
                "Executor(..., recorders=[SessionLog(path)]) instead."
            )
        self.executor = executor or Executor(self.toolset, policy=policy, recorders=_recorders(session_log))
        self.principal = principal or Principal()
        self.system_prompt = system_prompt
        self.streaming_execution = streaming_execution
        self.mode: Mode | ModeChooser = mode
        self.responder = responder
        self._tool_prompt: tuple[tuple[ToolSpec, ...], str] = ((), "")
        self._system_message = SystemMessage(content=system_prompt)

    def system_message(self, specs: Sequence[ToolSpec]) -> SystemMessage:
        """`system(specs)` as the conversation's first message (made again only when it changes)."""
        text = self.system(specs)
        if text != self._system_message.content:
            self._system_message = SystemMessage(content=text)
        return self._system_message

    def system(self, specs: Sequence[ToolSpec] | None = None) -> str:
        """The system prompt the model sees: yours, then (for text dialects) how to call the tools.

        The tool prompt is rendered again only when the tools offered change (`specs`, default: the
        toolset's now).
        """
        offered = tuple(self.toolset.specs() if specs is None else specs)
        if self.native or not offered:
            return self.system_prompt
        cached, prompt = self._tool_prompt
        if offered != cached:  # tuples compare by identity first: the usual case costs no spec comparison
            prompt = render_tools(self.dialect, offered)
            self._tool_prompt = (offered, prompt)
        return "\n\n".join(p for p in (self.system_prompt, prompt) if p)

    async def run(
        self,
        prompt: str,
        *,
        history: Sequence[Message] = (),
        session: Session | None = None,
        on_event: EventHandler | None = None,
    ) -> RunResult:
        """Run one user turn to its end; `on_event` sees every event as it happens.

        With a `session`, the conversation continues from its messages and every new message is stored as
        it happens, so `resume(session)` can finish the run after a crash.
        """
        if session is not None:
            history = [*session.messages, *history]
        return await _Turn(self, on_event, session).run(prompt, [m for m in history if m.kind != "system"])

    async def resume(self, session: Session, *, on_event: EventHandler | None = None) -> RunResult:
        """Finish a run that stopped part way (e.g. its process was killed), without repeating finished calls.

        Calls the model made whose results were never stored go to the executor again: with a SQL journal,
        a call that completed returns its recorded envelope without running, and a mutating call left in
        doubt is refused with `CONFLICT` until it is resolved.
        """
        return await _Turn(self, on_event, session).run(
            None, [m for m in session.messages if m.kind != "system"]
        )


def _recorders(session_log: str | Path | None) -> tuple[SessionLog, ...]:
    return () if session_log is None else (SessionLog(session_log),)


def _core_names(termination: Termination) -> tuple[str, ...]:
    if isinstance(termination, EndTurn):
        return ("send_chat", "say", "open_url", "end_turn")
    if isinstance(termination, FinalResponse):
        return ("finalResponse",)
    return ()


class _Turn:
    """The state of one run."""

    def __init__(self, agent: Agent, on_event: EventHandler | None, session: Session | None = None):
        self.agent = agent
        self.session = session
        self.mode: Mode = "talk_first"
        self.held: list[Event] = []
        self.on_event = on_event
        self.run_state = Run(
            principal=agent.principal,
            session_id=session.id if session else None,
            max_calls=agent.limits.max_tool_calls,
        )
        self.run_id = self.run_state.id
        # Read once per run, not per model turn: the tool prompt, the tools offered and the parser's index.
        self.specs = agent.toolset.specs()
        self.system_message = agent.system_message(self.specs)
        self.tool_index = ToolIndex(self.specs)
        self.context = context_sources(agent.toolset)
        """What tools add to the system prompt before each model turn (memory.advise's working set)."""
        self.events: list[Event] = []
        self.messages: list[Message] = []
        self.text = _TextView(agent.dialect)
        self.refusals: dict[str, int] = {}
        self.turns = 0
        """Model turns in the conversation so far; the journal ids of calls are made unique with it."""
        self.answered: dict[str, AnyEnvelope] = {}
        """The current model turn's calls that have their envelope, by call id."""
        self.chars = 0
        """Model output so far, in characters (text dialects: all of it; native: its text and arguments)."""
        self.max_chars = None if agent.limits.max_tokens is None else agent.limits.max_tokens * 4
        self.lags: list[float] = []
        self.started = time.monotonic()

    async def emit(self, event: Event) -> None:
        self.events.append(event)
        if self.on_event is not None:
            maybe = self.on_event(event)
            if maybe is not None:
                await maybe

    async def add(self, *messages: Message) -> None:
        """Append to the conversation, and to the session's store when there is one."""
        self.messages.extend(messages)
        if self.session is not None:
            self.session.messages.extend(messages)
            if self.session.store is not None:
                await anyio.to_thread.run_sync(self.session.store.append, self.session.id, list(messages))

    async def run(self, prompt: str | None, history: Sequence[Message]) -> RunResult:
        """The run to its end; limits hold inside a turn too: the wall-time limit stops a model or a tool
        mid-way, the token limit stops the model's stream (calls it started are cancelled)."""
        wall_time = self.agent.limits.max_wall_time_s
        timer = None if wall_time is None else asyncio.timeout(wall_time)
        try:
            if timer is None:  # no scope at all: entering one costs ~1.6 µs a run
                return await self.steps(prompt, history)
            async with timer:
                return await self.steps(prompt, history)
        except _LimitReached as limit:
            return await self.end(None, limit.reason)
        except TimeoutError:
            if timer is None or not timer.expired():
                raise
            await self.cut_off(f"the run's time limit ({wall_time:g} s) was reached")
            return await self.end(None, "max_wall_time")

    async def cut_off(self, why: str) -> None:
        """Answer the calls a limit stopped before they finished (`TIMEOUT`), keeping the envelopes of those
        that did finish, so that the conversation stays well-formed for the next run."""
        unanswered = _unanswered(self.messages)
        if not unanswered:
            return
        envelopes: list[AnyEnvelope] = []
        for call in unanswered:
            envelope = self.answered.get(call.id)
            if envelope is None:
                envelope = _stopped(call, self.agent.toolset.get(call.name), why)
                await self.finish(call, envelope)
            envelopes.append(envelope)
        await self.add(
            *(
                ToolResultMessage(call_id=c.id, name=c.name, envelope=e)
                for c, e in zip(unanswered, envelopes, strict=True)
            )
        )

    async def steps(self, prompt: str | None, history: Sequence[Message]) -> RunResult:
        agent = self.agent
        self.messages = [self.system_message, *history]
        self.turns = sum(isinstance(m, AssistantMessage) for m in history)
        self.mode = cast(Mode, agent.mode) if isinstance(agent.mode, str) else agent.mode(prompt or "")
        await self.emit(ChainStartEvent(run_id=self.run_id))
        # Calls an earlier run left without results (it crashed or was cancelled) are answered first, before
        # the new prompt: providers require a call's result right after it. The journal answers those that
        # ran and refuses those in doubt.
        unanswered = _unanswered(self.messages)
        if unanswered:
            for call in unanswered:
                await self.emit(ToolStartEvent(run_id=self.run_id, data=_describe(call), call=call))

            async def answered(index: int, envelope: AnyEnvelope) -> None:
                await self.finish(unanswered[index], envelope)

            envelopes = await agent.executor.execute_all(
                _journaled(unanswered, self.turns), self.run_state, on_result=answered
            )
            await self.add(
                *(
                    ToolResultMessage(call_id=c.id, name=c.name, envelope=e)
                    for c, e in zip(unanswered, envelopes, strict=True)
                )
            )
        if prompt is not None:
            await self.add(UserMessage(content=prompt))
        iterations = 0
        awaiting_final = False
        final_attempts = 0
        while True:
            reason = agent.limits.exceeded(
                iterations=iterations,
                tool_calls=self.run_state.calls,
                chars=self.chars,
                elapsed_s=time.monotonic() - self.started,
            )
            if reason is not None:
                return await self.end(None, reason)
            iterations += 1
            parsed, envelopes = await self.model_turn()
            if awaiting_final:
                assert isinstance(agent.termination, FinalResponse)
                value, problem = _final_json(parsed.content, agent.termination)
                if problem is None:
                    return await self.end(value, "final_response")
                final_attempts += 1
                if final_attempts >= agent.termination.attempts:
                    await self.emit(
                        ErrorEvent(
                            run_id=self.run_id, data={"error": "INVALID_FINAL_RESPONSE", "message": problem}
                        )
                    )
                    return await self.end(None, "invalid_final_response")
                await self.add(UserMessage(content=f"{problem}\n\n{_format_request(agent.termination)}"))
                continue
            ended = await self.judge(parsed, envelopes)
            if ended is not None:
                return ended
            if isinstance(agent.termination, FinalResponse) and any(
                c.name == "finalResponse" and isinstance(e, OkEnvelope)
                for c, e in zip(parsed.calls, envelopes, strict=True)
            ):
                awaiting_final = True
                await self.add(UserMessage(content=_format_request(agent.termination)))

    async def judge(self, parsed: ParseResult, envelopes: list[AnyEnvelope]) -> RunResult | None:
        """Whether the turn just taken ends the run."""
        termination = self.agent.termination
        for call, envelope in zip(parsed.calls, envelopes, strict=True):
            if isinstance(envelope, ErrorEnvelope) and envelope.error.code != ErrorCode.QUOTA_EXCEEDED:
                count = self.refusals[call.name] = self.refusals.get(call.name, 0) + 1
                if count > self.agent.limits.retry_budget:
                    message = f"{call.name} was refused {count} times in this run; stopping."
                    await self.emit(
                        ErrorEvent(run_id=self.run_id, data={"error": "RETRY_BUDGET", "message": message})
                    )
                    return await self.end(None, "retry_budget")
        if isinstance(termination, EndTurn):
            ok = [c for c, e in zip(parsed.calls, envelopes, strict=True) if isinstance(e, OkEnvelope)]
            if any(c.name == "end_turn" for c in ok):
                chats = [c.arguments.get("content") for c in ok if c.name == "send_chat"]
                return await self.end(chats[-1] if chats else parsed.content, "end_turn")
            if not parsed.calls:
                await self.add(UserMessage(content=termination.reminder))
            return None
        if isinstance(termination, NoCalls) and not parsed.calls and not parsed.errors:
            return await self.end(parsed.content, "no_calls")
        return None

    async def end(self, output: Any, reason: str) -> RunResult:
        if self.agent.responder is not None and reason in ("no_calls", "end_turn"):
            output = await self.respond()
        await self.emit(
            ChainEndEvent(
                run_id=self.run_id, data=output, toolCalls=list(self.run_state.records), reason=reason
            )
        )
        return RunResult(output, reason, self.messages, self.events, self.lags)

    async def respond(self) -> str:
        """Planner -> executor -> responder: the responder writes the reply from the whole conversation."""
        assert self.agent.responder is not None
        await self.emit(ChatModelStartEvent(run_id=self.run_id, toolCalls=list(self.run_state.records)))
        request = ModelRequest(
            messages=[*self.text.of(self.messages), UserMessage(content=RESPOND)],
            system=self.agent.system_prompt,
        )
        parts: list[str] = []
        async for chunk in self.agent.responder.stream(request):
            if isinstance(chunk, str) and chunk:
                parts.append(chunk)
                await self.emit(ChatModelStreamEvent(run_id=self.run_id, data=chunk))
        reply = "".join(parts)
        await self.add(AssistantMessage(content=reply))
        return reply

    async def show(self, event: Event) -> None:
        """User-visible text: now (talk first), or held until the turn's tools are done (act first)."""
        if self.mode == "act_first":
            self.held.append(event)
        else:
            await self.emit(event)

    async def release(self) -> None:
        held, self.held = self.held, []
        for event in held:
            await self.emit(event)

    # --------------------------------------------------------------------------------------- one turn

    async def model_turn(self) -> tuple[ParseResult, list[AnyEnvelope]]:
        agent = self.agent
        self.turns += 1
        turn = self.turns
        await self.emit(ChatModelStartEvent(run_id=self.run_id, toolCalls=list(self.run_state.records)))
        parser = stream_parser(agent.dialect, self.tool_index)
        request = ModelRequest(
            messages=list(self.messages) if agent.native else self.text.of(self.messages),
            tools=self.specs if agent.native else (),
            system=with_context(self.system_message.content, self.context, self.run_state.session_id),
        )
        answered: dict[str, AnyEnvelope] = {}
        self.answered = answered
        raw: list[str] = []
        stream = aiter(agent.model.stream(request))
        # A call that may start now becomes a task the next time the event loop runs, i.e. as soon as the
        # stream waits for the model; one still waiting when the stream has ended runs with the turn's other
        # calls instead, which saves the hop through the event loop (plain asyncio tasks: an anyio task
        # group costs ~25 µs a turn, a task ~5 µs).
        tasks: list[asyncio.Task[None]] = []
        waiting: dict[str, asyncio.Handle] = {}

        def start(call: ToolCall, completed_at: float) -> None:
            del waiting[call.id]
            tasks.append(asyncio.create_task(self.execute(call, turn, answered, completed_at)))

        loop = asyncio.get_running_loop()
        try:
            while ready := await self.read(stream, parser, raw):
                for call in ready:
                    waiting[call.id] = loop.call_soon(start, call, time.monotonic())
            for handle in waiting.values():
                handle.cancel()
            for task in tasks:
                await task
        except BaseException:  # the model failed or the run was cancelled: stop what this turn started
            for handle in waiting.values():
                handle.cancel()
            for task in tasks:
                task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(*tasks, return_exceptions=True)
                if (aclose := getattr(stream, "aclose", None)) is not None:
                    await aclose()  # the provider's response is released now, not when collected
            raise
        parser.close()
        parsed = parser.result
        # Stored before any mutating call runs: after a crash, `resume` finds these calls and the journal
        # says which of them ran.
        await self.add(
            AssistantMessage(
                content=parsed.content,
                reasoning=parsed.reasoning,
                tool_calls=tuple(parsed.calls),
                raw="".join(raw),
            )
        )
        later = [c for c in parsed.calls if c.id not in answered]
        if later:
            for call in later:
                await self.emit(ToolStartEvent(run_id=self.run_id, data=_describe(call), call=call))

            async def done(index: int, envelope: AnyEnvelope) -> None:
                answered[later[index].id] = envelope
                await self.finish(later[index], envelope)

            await agent.executor.execute_all(_journaled(later, turn), self.run_state, on_result=done)
        envelopes = [answered[c.id] for c in parsed.calls]
        await self.release()  # act first: the turn's tools are done (or need input), the text can show
        await self.add(
            *(
                ToolResultMessage(call_id=c.id, name=c.name, envelope=e)
                for c, e in zip(parsed.calls, envelopes, strict=True)
            )
        )
        if parsed.errors:
            problems = "; ".join(e.message for e in parsed.errors)
            await self.add(
                UserMessage(content=f"Some of your output could not be read as tool calls: {problems}")
            )
        return parsed, envelopes

    async def read(
        self, stream: AsyncIterator[ModelChunk], parser: StreamParser, raw: list[str]
    ) -> list[ToolCall]:
        """Feed the model's chunks to the parser, showing its text, until calls that may start now complete
        (returned) or the stream ends (an empty list)."""
        async for chunk in stream:
            text = isinstance(chunk, str)
            if text:
                raw.append(chunk)
                self.chars += len(chunk)
                events = parser.feed(chunk)
            else:
                events = parser.feed_event(chunk)
            ready: list[ToolCall] = []
            for event in events:
                if not text:  # a provider's event: count what the model wrote in it
                    self.chars += _written(event)
                if isinstance(event, TextDelta):
                    if event.text:
                        await self.show(ChatModelStreamEvent(run_id=self.run_id, data=event.text))
                elif isinstance(event, CallCompleted) and self.streamable(event.call):
                    ready.append(event.call)
            if self.max_chars is not None and self.chars >= self.max_chars:
                raise _LimitReached("max_tokens")  # a model running away is stopped, not waited for
            if ready:
                return ready
        return []

    def streamable(self, call: ToolCall) -> bool:
        if not self.agent.streaming_execution:
            return False
        tool = self.agent.toolset.get(call.name)
        return tool is not None and tool.spec.side_effects in STREAMABLE and not tool.spec.sequential

    async def execute(
        self, call: ToolCall, turn: int, results: dict[str, AnyEnvelope], completed_at: float
    ) -> None:
        self.lags.append(time.monotonic() - completed_at)
        await self.emit(ToolStartEvent(run_id=self.run_id, data=_describe(call), call=call))
        envelope = await self.agent.executor.execute(_journaled([call], turn)[0], self.run_state)
        results[call.id] = envelope
        await self.finish(call, envelope)

    async def finish(self, call: ToolCall, envelope: AnyEnvelope) -> None:
        await self.emit(ToolEndEvent(run_id=self.run_id, call_id=call.id, envelope=envelope))
        if isinstance(envelope, NeedsEnvelope):
            await self.emit(NeedsEvent(run_id=self.run_id, call_id=call.id, needs=envelope.needs))
        if not isinstance(envelope, OkEnvelope) or call.name not in CORE_TOOL_NAMES:
            return
        args = call.arguments
        if call.name == "send_chat":
            await self.emit(ChatEvent(run_id=self.run_id, data=str(args.get("content", ""))))
        elif call.name == "say":
            data: Any = envelope.data
            audio = cast(dict[str, Any], data).get("audio") if isinstance(data, dict) else None
            await self.emit(
                SpeechEvent(
                    run_id=self.run_id,
                    utterance=str(args.get("utterance", "")),
                    voice_id=args.get("voiceId"),
                    style=args.get("style"),
                    audio=cast(str | None, audio),
                )
            )
        elif call.name == "open_url":
            await self.emit(OpenUrlEvent(run_id=self.run_id, url=str(args.get("url", ""))))


class _LimitReached(Exception):
    """A limit was reached inside a model turn; the run ends with `reason`."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _written(event: ParseEvent) -> int:
    """Characters of model output in a parse event: its text, reasoning or argument fragment."""
    if isinstance(event, TextDelta | ReasoningDelta):
        return len(event.text)
    return len(event.arguments_delta) if isinstance(event, CallDelta) else 0


def _journaled(calls: Sequence[ToolCall], turn: int) -> list[ToolCall]:
    """The calls as the executor sees them: ids made unique in the conversation by the turn that made them.

    Text dialects number their calls from `call_0` in every turn and models reuse their own ids (`c1`), but
    the journal keys repeats by call id: the same id in a later turn is a new call. The number is derived
    from the conversation, so `resume` after a crash finds the same ids in the journal.
    """
    return [call.model_copy(update={"id": f"{call.id}@{turn}"}) for call in calls]


def _unanswered(messages: Sequence[Message]) -> list[ToolCall]:
    """Calls of the last assistant message that have no result yet."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            answered = {m.call_id for m in messages[index + 1 :] if isinstance(m, ToolResultMessage)}
            return [c for c in message.tool_calls if c.id not in answered]
    return []


def _stopped(call: ToolCall, tool: Tool[..., Any] | None, why: str) -> ErrorEnvelope:
    suggestion = stopped_suggestion(tool.spec.side_effects if tool is not None else None)
    message = f"{call.name} was stopped before it finished: {why}."
    info = ErrorInfo(code=ErrorCode.TIMEOUT, message=message, recoverable=True, suggestion=suggestion)
    return ErrorEnvelope(error=info)


def _describe(call: ToolCall) -> str:
    """Seed 004's line, to the letter: `Starting tool: search_docs with inputs: {'query': 'ollama'}`."""
    text = f"Starting tool: {call.name} with inputs: {call.arguments!r}"
    return text if len(text) <= 300 else text[:299] + "…"


class _TextView:
    """The conversation as a text dialect's model reads it: the model's own output as it wrote it, and tool
    results as one user message in the dialect's feedback format. Kept up to date as the conversation grows,
    so each message is converted once (converting it all again every turn made long runs quadratic)."""

    def __init__(self, dialect: str):
        self.dialect = dialect
        self.converted: list[Message] = []
        self.seen = 0
        self.results: list[ToolResultMessage] = []
        """Results at the end of what was seen, not yet followed by another message."""

    def of(self, messages: Sequence[Message]) -> list[Message]:
        """`messages` (the conversation seen before, grown) as the model reads it; a new list each time."""
        for message in messages[self.seen :]:
            if isinstance(message, ToolResultMessage):
                self.results.append(message)
                continue
            if self.results:
                self.converted.append(UserMessage(content=render_results(self.dialect, self.results)))
                self.results = []
            if isinstance(message, AssistantMessage) and message.raw is not None:
                message = AssistantMessage(content=message.raw)
            self.converted.append(message)
        self.seen = len(messages)
        if not self.results:
            return list(self.converted)
        return [*self.converted, UserMessage(content=render_results(self.dialect, self.results))]


def _format_request(final: FinalResponse) -> str:
    if final.schema is None:
        return final.instructions
    return f"{final.instructions}\nIt must match this JSON Schema:\n{json.dumps(final.schema, ensure_ascii=False)}"


def _final_json(text: str, final: FinalResponse) -> tuple[Any, str | None]:
    """The model's final answer as JSON, or the problem to send back."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[-1].rsplit("```", 1)[0]
    parsed = loads(body)
    if not parsed.ok:
        return None, f"Your final answer is not valid JSON ({parsed.error})."
    if final.schema is not None:
        checked = ArgumentValidator(final.schema, tool_name="the final answer").validate(parsed.value)
        if checked.problems:
            listed = "; ".join(str(p) for p in checked.problems)
            return None, f"Your final answer does not match the required format: {listed}."
        return checked.arguments, None
    return parsed.value, None
