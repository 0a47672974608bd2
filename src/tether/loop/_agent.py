"""The agent loop: model turn -> parse (while streaming) -> execute -> results back -> repeat until done."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import anyio
from pydantic import BaseModel

from tether.dialects import (
    CallCompleted,
    CallDelta,
    ParseEvent,
    ParseResult,
    ReasoningDelta,
    StreamParser,
    TextDelta,
    ToolIndex,
    render_tools,
    stream_parser,
)
from tether.envelopes import stopped_suggestion
from tether.exceptions import ModelError, UserError
from tether.execution import Executor, Policy, Principal, Run, SessionLog
from tether.loop._context import context_sources, with_context
from tether.loop._core import CORE_TOOL_NAMES, core_tools
from tether.loop._fallback import Fallback
from tether.loop._modes import Mode, ModeChooser
from tether.loop._session import Session
from tether.loop._speech import synthesize
from tether.loop._termination import (
    EndTurn,
    FinalResponse,
    Limits,
    NoCalls,
    Termination,
    core_tool_names,
    termination_for,
)
from tether.loop._text_view import TextView
from tether.models import Model, ModelChunk, ModelRequest, model_from_name
from tether.tools import AbstractToolset, Tool, ToolsLike, as_toolset
from tether.types import (
    AssistantMessage,
    ChainEndEvent,
    ChainStartEvent,
    ChatEvent,
    ChatMessageV2,
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

T = TypeVar("T")
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
    error: Exception | None = None
    """What the model (or its provider) raised when the run ended with `model_error`."""

    def chat_message(self) -> ChatMessageV2:
        """The run's answer as seed 004's `chat_message.v2`: its text (JSON for a structured output) and the
        `{toolType, toolName, input, output}` record of every call that ran."""
        ends = [e for e in self.events if isinstance(e, ChainEndEvent)]
        records = ends[-1].toolCalls if ends else []
        output = self.output
        if isinstance(output, BaseModel):
            content = output.model_dump_json()
        elif isinstance(output, str):
            content = output
        else:
            content = "" if output is None else json.dumps(output, ensure_ascii=False, default=str)
        return ChatMessageV2(role="assistant", content=content, toolCalls=list(records))


class Agent:
    """A model, a dialect, tools and the rules of the loop. `run` needs an asyncio event loop
    (`asyncio.run`, or `anyio.run` with its default backend).

    A model or provider failure does not raise: the run ends with reason `model_error`, an `error` event
    and `on_chain_end` (seed 004), and `RunResult.error` holds the exception. With a `responder`, planner
    and responder stand in for each other when one fails before it has written anything (the responder
    plans only if it streams what the dialect reads: text, or the same provider's events); one that keeps
    failing (3 times in a row) is skipped for 30 s (a circuit breaker).

    Args:
        model: The model to drive: a `Model` (`ScriptedModel`/`FunctionModel` in tests, a provider in
            production) or a name such as `"openai:gpt-4o-mini"` (see `tether.models.model_from_name`).
        tools: The agent's own tools (default: those of `executor`, when one is given); the core tools its
            termination policy needs are the loop's own and are added whatever executor is used.
        dialect: How tool calls are written: a text dialect (`json_calls`, `fenced`, `hermes`, ...) or the
            model's native one (the default when the model has one, else `json_calls`).
        reasoning_open: The model's chat template already opens its reasoning block (the prompt ends with
            `<think>`, as many servers' templates do), so every output begins inside it and shows only its
            end: text up to the end marker is reasoning, and calls written there are not run. Text dialects
            with a reasoning block only.
        termination: `NoCalls()` (default), `EndTurn()` (seed 000) or `FinalResponse(schema)` (seed 003).
        output_type: The type of the final output, e.g. a pydantic model: the run ends with a validated
            instance of it, through `FinalResponse(schema=output_type)` (the default termination then).
        limits: Iterations, tool calls, tokens, wall time and the per-tool retry budget.
        system_prompt: Your instructions; the dialect's tool prompt is appended for text dialects.
        policy: Executor policy (ignored when `executor` is given).
        executor: A configured executor, e.g. with a SQL journal.
        principal: On whose behalf tools run (scopes, rate limits).
        deps: The application's dependencies (a database handle, a client, ...) for tools, as
            `ToolContext.deps`; `run(..., deps=...)` overrides it for one run.
        streaming_execution: Start calls to tools without side effects as soon as the stream completes
            them, while the model keeps generating; mutating tools always wait for the end of the turn.
        mode: `talk_first` (stream text at once), `act_first` (hold a turn's text until its tools finish or
            need input), or a function choosing one per prompt, e.g. `actionable_intent` (seed 002).
        responder: A second model that writes the user-facing reply once the tool loop is done (planner ->
            executor -> responder); `model` is then the planner, whose text is never shown to the user.
            Often a larger model than the planner. A model or a name, as for `model`.
        session_log: Append every answered call to this markdown file, MOOLLM's `session-log.md` (seed 001):
            a YAML block per call, with its `why` and comments, and one per result.
    """

    def __init__(
        self,
        model: Model | str,
        tools: ToolsLike = None,
        *,
        dialect: str | None = None,
        reasoning_open: bool = False,
        termination: Termination | None = None,
        output_type: Any = None,
        limits: Limits | None = None,
        system_prompt: str = "",
        policy: Policy | None = None,
        executor: Executor | None = None,
        principal: Principal | None = None,
        deps: Any = None,
        streaming_execution: bool = True,
        mode: Mode | ModeChooser = "talk_first",
        responder: Model | str | None = None,
        session_log: str | Path | None = None,
    ):
        self.model = model = _model(model, dialect)
        self.termination: Termination = termination_for(termination, output_type)
        self.limits = limits or Limits()
        self.dialect = dialect or model.native_dialect or "json_calls"
        self.native = self.dialect == model.native_dialect
        self.reasoning_open = reasoning_open
        if reasoning_open:
            _check_reasoning_open(self.dialect, self.native)
        core = core_tool_names(self.termination)
        own = executor.toolset if tools is None and executor is not None else as_toolset(tools)
        added = [name for name in core if own.get(name) is None]
        self.toolset: AbstractToolset = own | core_tools(*added) if added else own
        if executor is not None and session_log is not None:
            raise UserError(
                "Agent(session_log=...) cannot add a log to an executor you configured: pass "
                "Executor(..., recorders=[SessionLog(path)]) instead."
            )
        self.executor = executor or Executor(self.toolset, policy=policy, recorders=_recorders(session_log))
        missing = [name for name in core if self.executor.toolset.get(name) is None]
        self.core_executor = Executor(core_tools(*missing)) if missing else None
        """Runs the core tools a given executor does not have: they are the loop's, whatever executor."""
        self.core_routed = frozenset(missing)
        self.principal = principal or Principal()
        self.deps = deps
        self.system_prompt = system_prompt
        self.streaming_execution = streaming_execution
        self.mode: Mode | ModeChooser = mode
        self.responder = None if responder is None else _model(responder, None)
        self.planner_backup = self.responder if _speaks(self.responder, self) else None
        """The model that plans when the planner fails: the responder, if it streams what the parser reads."""
        self.fallback = Fallback()
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
        deps: Any = None,
    ) -> RunResult:
        """Run one user turn to its end; `on_event` sees every event as it happens.

        With a `session`, the conversation continues from its messages and every new message is stored as
        it happens, so `resume(session)` can finish the run after a crash. `deps` replaces the agent's
        `deps` for this run.
        """
        if session is not None:
            history = [*session.messages, *history]
        turn = _Turn(self, on_event, session, self.deps if deps is None else deps)
        return await turn.run(prompt, [m for m in history if m.kind != "system"])

    def run_sync(
        self,
        prompt: str,
        *,
        history: Sequence[Message] = (),
        session: Session | None = None,
        on_event: EventHandler | None = None,
        deps: Any = None,
    ) -> RunResult:
        """`run` from synchronous code (a script, a notebook cell without a running loop, a worker thread).

        Inside async code, `await agent.run(...)` instead: an event loop cannot be started from within one.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(
                self.run(prompt, history=history, session=session, on_event=on_event, deps=deps)
            )
        raise UserError(
            "Agent.run_sync() was called inside a running event loop: use `await agent.run(...)`."
        )

    async def resume(self, session: Session, *, on_event: EventHandler | None = None) -> RunResult:
        """Finish a run that stopped part way (e.g. its process was killed), without repeating finished calls.

        Calls the model made whose results were never stored go to the executor again: with a SQL journal,
        a call that completed returns its recorded envelope without running, and a mutating call left in
        doubt is refused with `CONFLICT` until it is resolved.
        """
        return await _Turn(self, on_event, session, self.deps).run(
            None, [m for m in session.messages if m.kind != "system"]
        )


def _recorders(session_log: str | Path | None) -> tuple[SessionLog, ...]:
    return () if session_log is None else (SessionLog(session_log),)


def _check_reasoning_open(dialect: str, native: bool) -> None:
    """`reasoning_open` needs a text dialect that has a reasoning block to begin inside."""
    if native:
        raise UserError(
            f"Agent(reasoning_open=True) reads text that begins inside a reasoning block, but {dialect!r} is the "
            "model's native tool calling (the provider separates reasoning itself): pass a text dialect, e.g. "
            "dialect='hermes' (--dialect hermes), or leave reasoning_open off."
        )
    parser = stream_parser(dialect)
    try:
        parser.open_reasoning()
    except UserError as e:
        raise UserError(
            f"Agent(reasoning_open=True): {e}. Pass the dialect whose reasoning block the template opens, e.g. "
            "dialect='hermes' (--dialect hermes) for `<think>`, or leave reasoning_open off."
        ) from None


def _model(model: Model | str, dialect: str | None) -> Model:
    """A model given by name (`openai:gpt-4o-mini`) made; a text dialect means its tools go in the prompt."""
    if isinstance(model, Model):
        return model
    if not isinstance(model, str) or not model:  # pyright: ignore[reportUnnecessaryIsInstance] - user input
        raise UserError(
            f"Agent(model=...) takes a Model or a name such as 'openai:gpt-4o-mini', not {model!r}."
        )
    return model_from_name(model, native_tools=dialect is None)


def _speaks(backup: Model | None, agent: Agent) -> bool:
    """Whether `backup` streams what the agent's parser reads: provider events of its native dialect, or text."""
    if backup is None:
        return False
    return backup.native_dialect == (agent.dialect if agent.native else None)


class _Turn:
    """The state of one run."""

    def __init__(
        self, agent: Agent, on_event: EventHandler | None, session: Session | None = None, deps: Any = None
    ):
        self.agent = agent
        self.session = session
        self.mode: Mode = "talk_first"
        self.held: list[Event] = []
        self.on_event = on_event
        self.run_state = Run(
            principal=agent.principal,
            session_id=session.id if session else None,
            deps=deps,
            max_calls=agent.limits.max_tool_calls,
        )
        self.visible = agent.responder is None
        """Whether the model's text reaches the user: a planner's never does, only its responder's."""
        self.speaking: list[asyncio.Task[None]] = []
        """`say` calls being spoken: they run alongside the model's next turns and end before the run does."""
        self.said: dict[str, asyncio.Future[bool]] = {}
        """`say` calls given their place among the utterances, by call id, until their envelope says
        whether to speak."""
        self.run_id = self.run_state.id
        # Read once per run, not per model turn: the tool prompt, the tools offered and the parser's index.
        self.specs = agent.toolset.specs()
        self.system_message = agent.system_message(self.specs)
        self.tool_index = ToolIndex(self.specs)
        self.context = context_sources(agent.toolset)
        """What tools add to the system prompt before each model turn (memory.advise's working set)."""
        self.events: list[Event] = []
        self.messages: list[Message] = []
        self.text = TextView(agent.dialect)
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
        except _ModelFailed as failed:
            return await self.failed(failed.error)
        except TimeoutError:
            if timer is None or not timer.expired():
                raise
            await self.cut_off(f"the run's time limit ({wall_time:g} s) was reached")
            return await self.end(None, "max_wall_time")
        finally:
            for task in self.speaking:  # the run did not end normally: speech still going is not wanted
                task.cancel()

    async def failed(self, error: Exception) -> RunResult:
        """The model failed (and so did its stand-in, if any): `error`, then `on_chain_end` (seed 004)."""
        message = str(error) if isinstance(error, ModelError) else f"{type(error).__name__}: {error}"
        await self.emit(ErrorEvent(run_id=self.run_id, data={"error": "MODEL_ERROR", "message": message}))
        result = await self.end(None, "model_error")
        result.error = error
        return result

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

            envelopes = await self.execute_all(_journaled(unanswered, self.turns), answered)
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
            if agent.planner_backup is None:
                parsed, envelopes = await self.model_turn(agent.model)
            else:  # planner -> responder: either stands in for the other
                parsed, envelopes = await self.first_that_works(
                    agent.model, agent.planner_backup, self.model_turn
                )
            if awaiting_final:
                assert isinstance(agent.termination, FinalResponse)
                value, problem = agent.termination.read(parsed.content)
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
                await self.add(UserMessage(content=f"{problem}\n\n{agent.termination.request()}"))
                continue
            ended = await self.judge(parsed, envelopes)
            if ended is not None:
                return ended
            if isinstance(agent.termination, FinalResponse) and any(
                c.name == "finalResponse" and isinstance(e, OkEnvelope)
                for c, e in zip(parsed.calls, envelopes, strict=True)
            ):
                awaiting_final = True
                await self.add(UserMessage(content=agent.termination.request()))

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
        if isinstance(termination, NoCalls):
            if not parsed.calls and not parsed.errors:
                return await self.end(parsed.content, "no_calls")
        elif not parsed.calls:  # FinalResponse
            await self.add(UserMessage(content=termination.reminder))  # the seed's loop: back to work
        return None

    async def end(self, output: Any, reason: str) -> RunResult:
        if self.agent.responder is not None and reason in ("no_calls", "end_turn"):
            output = await self.respond()
        if self.speaking:
            for place in self.said.values():  # calls a failure or a limit stopped before they finished
                if not place.done():
                    place.set_result(False)
            self.said.clear()
            await asyncio.gather(*self.speaking)
        await self.emit(
            ChainEndEvent(
                run_id=self.run_id, data=output, toolCalls=list(self.run_state.records), reason=reason
            )
        )
        return RunResult(output, reason, self.messages, self.events, self.lags)

    async def respond(self) -> str:
        """Planner -> executor -> responder: the responder writes the reply from the whole conversation; the
        planner stands in when it fails before writing anything."""
        agent = self.agent
        assert agent.responder is not None
        request = ModelRequest(
            messages=[*self.text.of(self.messages), UserMessage(content=RESPOND)],
            system=agent.system_prompt,
        )

        async def reply(model: Model) -> str:
            await self.emit(ChatModelStartEvent(run_id=self.run_id, toolCalls=list(self.run_state.records)))
            parts: list[str] = []
            parser = stream_parser(model.native_dialect, self.tool_index) if model.native_dialect else None
            stream = aiter(model.stream(request))
            try:
                while (chunk := await _next(stream)) is not None:
                    if isinstance(chunk, str):
                        texts = [chunk]
                    else:  # a provider's event: its text
                        assert parser is not None
                        texts = [e.text for e in parser.feed_event(chunk) if isinstance(e, TextDelta)]
                    for text in texts:
                        if text:
                            parts.append(text)
                            await self.emit(ChatModelStreamEvent(run_id=self.run_id, data=text))
            except _ModelFailed as failed:
                failed.before_output = not parts
                raise
            finally:
                if (aclose := getattr(stream, "aclose", None)) is not None:
                    await aclose()
            return "".join(parts)

        text = await self.first_that_works(agent.responder, agent.model, reply)
        await self.add(AssistantMessage(content=text))
        return text

    async def first_that_works(
        self, first: Model, backup: Model | None, attempt: Callable[[Model], Awaitable[T]]
    ) -> T:
        """`attempt(first)`, or `attempt(backup)` when `first` fails before any output (or is skipped while
        its circuit breaker is open); the last model's failure is raised."""
        fallback = self.agent.fallback
        *others, last = fallback.order(first, backup)
        for model in others:
            try:
                result = await attempt(model)
            except _ModelFailed as failed:
                fallback.failed(model)
                if not failed.before_output:
                    raise
                continue
            fallback.succeeded(model)
            return result
        try:
            result = await attempt(last)
        except _ModelFailed:
            fallback.failed(last)
            raise
        fallback.succeeded(last)
        return result

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

    async def model_turn(self, model: Model) -> tuple[ParseResult, list[AnyEnvelope]]:
        """One model turn: `model` streams its output while the calls that may start run, then the rest run
        and every result is added to the conversation."""
        agent = self.agent
        self.turns += 1
        turn = self.turns
        await self.emit(ChatModelStartEvent(run_id=self.run_id, toolCalls=list(self.run_state.records)))
        parser = stream_parser(agent.dialect, self.tool_index, reasoning_open=agent.reasoning_open)
        request = ModelRequest(
            messages=list(self.messages) if agent.native else self.text.of(self.messages),
            tools=self.specs if agent.native else (),
            system=with_context(self.system_message.content, self.context, self.run_state.session_id),
        )
        answered: dict[str, AnyEnvelope] = {}
        self.answered = answered
        raw: list[str] = []
        chars = self.chars
        stream = aiter(model.stream(request))
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
        except BaseException as error:  # the model failed or the run was cancelled: stop what it started
            for handle in waiting.values():
                handle.cancel()
            for task in tasks:
                task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(*tasks, return_exceptions=True)
                if (aclose := getattr(stream, "aclose", None)) is not None:
                    await aclose()  # the provider's response is released now, not when collected
            if isinstance(error, _ModelFailed):  # another model may take the turn over
                error.before_output = self.chars == chars and not tasks
                self.turns -= 1
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
                if call.name == "say":
                    self.book_speech(call)
                await self.emit(ToolStartEvent(run_id=self.run_id, data=_describe(call), call=call))

            async def done(index: int, envelope: AnyEnvelope) -> None:
                answered[later[index].id] = envelope
                await self.finish(later[index], envelope)

            if agent.core_executor is None:  # the usual case, without a coroutine more a turn
                await agent.executor.execute_all(_journaled(later, turn), self.run_state, on_result=done)
            else:
                await self.execute_all(_journaled(later, turn), done)
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
        following = stream.__anext__
        while True:
            try:  # `_next`, inlined: a coroutine call per chunk costs ~0.3 µs
                chunk = await following()
            except StopAsyncIteration:
                return []
            except UserError:
                raise
            except Exception as e:
                raise _ModelFailed(e) from e
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
                    if event.text and self.visible:
                        await self.show(ChatModelStreamEvent(run_id=self.run_id, data=event.text))
                elif isinstance(event, CallCompleted) and self.streamable(event.call):
                    ready.append(event.call)
            if self.max_chars is not None and self.chars >= self.max_chars:
                raise _LimitReached("max_tokens")  # a model running away is stopped, not waited for
            if ready:
                return ready

    def streamable(self, call: ToolCall) -> bool:
        if not self.agent.streaming_execution:
            return False
        tool = self.agent.toolset.get(call.name)
        return tool is not None and tool.spec.side_effects in STREAMABLE and not tool.spec.sequential

    async def execute(
        self, call: ToolCall, turn: int, results: dict[str, AnyEnvelope], completed_at: float
    ) -> None:
        self.lags.append(time.monotonic() - completed_at)
        if call.name == "say":  # before any await: streamed calls start in the order they were said
            self.book_speech(call)
        await self.emit(ToolStartEvent(run_id=self.run_id, data=_describe(call), call=call))
        agent = self.agent
        executor = agent.core_executor if call.name in agent.core_routed else agent.executor
        envelope = await (executor or agent.executor).execute(_journaled([call], turn)[0], self.run_state)
        results[call.id] = envelope
        await self.finish(call, envelope)

    async def execute_all(
        self, calls: list[ToolCall], on_result: Callable[[int, AnyEnvelope], Awaitable[None]]
    ) -> list[AnyEnvelope]:
        """A batch through the executor; core tools it does not have through the loop's own."""
        agent = self.agent
        core = agent.core_executor
        if core is None or not any(c.name in agent.core_routed for c in calls):
            return await agent.executor.execute_all(calls, self.run_state, on_result=on_result)
        envelopes: list[AnyEnvelope | None] = [None] * len(calls)
        for executor, indices in (
            (core, [i for i, c in enumerate(calls) if c.name in agent.core_routed]),
            (agent.executor, [i for i, c in enumerate(calls) if c.name not in agent.core_routed]),
        ):

            async def answered(n: int, envelope: AnyEnvelope, indices: list[int] = indices) -> None:
                envelopes[indices[n]] = envelope
                await on_result(indices[n], envelope)

            if indices:
                await executor.execute_all([calls[i] for i in indices], self.run_state, on_result=answered)
        return [e for e in envelopes if e is not None]

    async def finish(self, call: ToolCall, envelope: AnyEnvelope) -> None:
        await self.emit(ToolEndEvent(run_id=self.run_id, call_id=call.id, envelope=envelope))
        if call.name == "say":  # spoken alongside: the model's next turn does not wait for the speech
            place = self.said.pop(call.id, None) or self.book_speech(call, pop=True)
            place.set_result(isinstance(envelope, OkEnvelope))
        if isinstance(envelope, NeedsEnvelope):
            await self.emit(NeedsEvent(run_id=self.run_id, call_id=call.id, needs=envelope.needs))
        if not isinstance(envelope, OkEnvelope) or call.name not in CORE_TOOL_NAMES:
            return
        args = call.arguments
        if call.name == "send_chat":
            await self.emit(ChatEvent(run_id=self.run_id, data=str(args.get("content", ""))))
        elif call.name == "open_url":
            await self.emit(OpenUrlEvent(run_id=self.run_id, url=str(args.get("url", ""))))

    def book_speech(self, call: ToolCall, *, pop: bool = False) -> asyncio.Future[bool]:
        """Give a `say` call its place among the run's utterances, in the order the model said them (calls
        run concurrently and finish in any order); its envelope later says whether it is spoken."""
        place: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        if not pop:
            stale = self.said.get(call.id)
            if stale is not None and not stale.done():  # a call of a model turn that failed part way
                stale.set_result(False)
            self.said[call.id] = place
        before = self.speaking[-1] if self.speaking else None
        self.speaking.append(asyncio.create_task(self.speak(call, place, before)))
        return place

    async def speak(
        self, call: ToolCall, place: asyncio.Future[bool], before: asyncio.Task[None] | None
    ) -> None:
        """One utterance, after those said before it: one speech engine at a time, in order."""
        spoken = await place
        if before is not None:
            await asyncio.wait([before])  # its failure is its own
        if not spoken:
            return
        args = call.arguments
        utterance = str(args.get("utterance", ""))
        voice, style = args.get("voiceId"), args.get("style")
        audio = await synthesize(utterance, voice, style)
        await self.emit(
            SpeechEvent(
                run_id=self.run_id,
                utterance=utterance,
                voice_id=voice,
                style=style,
                audio=None if audio is None else str(audio),
            )
        )


class _ModelFailed(Exception):
    """The model (or its provider) raised while streaming a turn."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error
        self.before_output = False
        """It failed before writing anything or starting a call: another model may take the turn over."""


async def _next(stream: AsyncIterator[ModelChunk]) -> ModelChunk | None:
    """The model's next chunk, None at the end; what the model raises becomes `_ModelFailed` (a `UserError`
    is a developer's mistake and stays one)."""
    try:
        return await anext(stream)
    except StopAsyncIteration:
        return None
    except UserError:
        raise
    except Exception as e:
        raise _ModelFailed(e) from e


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
