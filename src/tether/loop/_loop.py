"""One run of an agent, as four steps a reader can hold in mind:

1. `begin`: answer the calls an earlier run left without results, then add the user's prompt;
2. `model_turn`: the model streams its output, which is parsed as it comes; calls without side effects start
   at once, the rest once the turn is stored; every result goes back into the conversation;
3. `judge`: the limits, then the termination policy's judge, say whether the run ends or goes on (with a
   message to the model, or none);
4. `end`: the responder writes the reply if there is one, speech finishes, `on_chain_end`.

Its state is a few small objects, each with one job: `Budget` (limits), the policy's `Judge` (termination),
`Calls` (scheduling and executing calls), `Conversation` (messages and their persistence), `Events` and
`Speaker` (what the user sees and hears).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from tether import _wire
from tether.dialects import (
    CallCompleted,
    CallDelta,
    CallFailed,
    CallStarted,
    ParseEvent,
    ReasoningDelta,
    StreamParser,
    TextDelta,
    get_dialect,
)
from tether.exceptions import ModelError, UserError
from tether.execution import Run
from tether.loop._calls import Calls
from tether.loop._context import with_context
from tether.loop._conversation import Conversation
from tether.loop._events import EventHandler, Events
from tether.loop._limits import Budget, LimitReached
from tether.loop._result import RunResult
from tether.loop._secrets import SecretsAtRest, refusals_for_redacted
from tether.loop._session import Session
from tether.loop._termination import Continue, End, TurnResult, Verdict
from tether.models import Model, ModelChunk, ModelRequest, TextChunk, Usage
from tether.types import (
    AnyEnvelope,
    AssistantMessage,
    ChatModelStartEvent,
    ChatModelStreamEvent,
    ErrorEvent,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from tether.loop._agent import Agent

__all__ = ["AgentRun"]

T = TypeVar("T")
RESPOND = (
    "Now write the reply to the user from the conversation and the tool results above. Do not call tools."
)


class AgentRun:
    """One run of an agent to its end."""

    __slots__ = (
        "agent",
        "budget",
        "calls",
        "conversation",
        "dialect",
        "events",
        "offer",
        "run_id",
        "run_state",
        "system_message",
        "visible",
    )

    def __init__(self, agent: Agent, on_event: EventHandler | None, session: Session | None, deps: Any):
        self.agent = agent
        # principal, session_id, deps positionally: each keyword costs a class call ~0.3k instructions
        self.run_state = Run(
            agent.principal, session.id if session else None, deps, max_calls=agent.limits.max_tool_calls
        )
        self.run_id = self.run_state.id
        # Read once per run, not per model turn (and worked out once per toolset): the tools offered, the
        # parser's index, the context sources (what tools add to the system prompt before each model turn,
        # e.g. memory.advise's working set), the tool prompt.
        self.offer = offer = agent.offer()
        # every event leaves the run with secrets redacted (docs/sessions.md); its own redactor: the store's
        # works in a worker thread. None when there is nothing to hide: no tool offered marks anything secret
        # and no secret is known (the redactor would hand out every event as it is: ~1.3 µs a run saved).
        known = session.secrets if session else ()
        secrets = None if offer.secret_free and not known else SecretsAtRest(offer.index.get, known)
        if secrets is not None:
            self.run_state.secrets = secrets.known  # one set: the journal redacts what the events do
        self.events = Events(self.run_id, on_event, secrets)
        self.system_message = agent.system_message(offer.specs)
        self.dialect = get_dialect(agent.dialect)
        self.calls = Calls(agent, offer, self.run_state, self.events)
        self.budget = Budget(agent.limits)
        # Redaction at rest only for a run that stores its messages (most runs keep none).
        at_rest = list if session is None else SecretsAtRest(offer.index.get, session.secrets)
        self.conversation = Conversation((), session, agent.dialect, agent.native, at_rest)
        self.visible = agent.responder is None
        """Whether the model's text reaches the user: a planner's never does, only its responder's."""

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
        except LimitReached as limit:
            return await self.end(End(None, limit.reason))
        except _ModelFailed as failed:
            return await self.failed(failed.error)
        except TimeoutError:
            if timer is None or not timer.expired():
                raise
            await self.cut_off(f"the run's time limit ({wall_time:g} s) was reached")
            return await self.end(End(None, "max_wall_time"))
        finally:
            secrets = self.events.secrets
            if secrets is not None and secrets.held_text:  # the run ends with no event to release it
                with anyio.CancelScope(shield=True):  # cancelled (`tether serve`'s cancel), or a bug
                    await self.events.flush()
            if (
                self.calls.spoken is not None
            ):  # speech still going when the run did not end normally is not wanted
                self.calls.spoken.cancel()

    async def steps(self, prompt: str | None, history: Sequence[Message]) -> RunResult:
        agent = self.agent
        await self.begin(prompt, history)
        try:
            judge = agent.termination.start()
        except Exception as error:  # the user's own policy: their exception, saying where it came from
            error.add_note(
                f"raised by {type(agent.termination).__name__}.start(), the run's termination policy"
            )
            raise
        if not callable(getattr(judge, "judge", None)):  # a policy of the user's own: say so before any turn
            raise UserError(
                f"{type(agent.termination).__name__}.start() returned {judge!r}, not a Judge: return an object "
                "with `judge(turn) -> End | Continue` (a policy that remembers nothing may return itself)."
            )
        while True:
            reason = self.budget.next_turn(self.run_state.calls)
            if reason is not None:
                return await self.end(End(None, reason))
            if agent.planner_backup is None:
                turn = await self.model_turn(agent.model)
            else:  # planner -> responder: either stands in for the other
                turn = await self.first_that_works(agent.model, agent.planner_backup, self.model_turn)
            verdict: Verdict | None = self.budget.refused(turn)
            if verdict is None:
                try:
                    verdict = judge.judge(turn)
                except Exception as error:  # the user's policy: their exception, saying where it came from
                    error.add_note(
                        f"raised by the judge of the agent's termination policy ({type(agent.termination).__name__})"
                        " after a model turn; the messages so far are in the session, if the run has one."
                    )
                    raise
            if isinstance(verdict, End):
                if type(verdict.reason) is not str:
                    raise UserError(_bad_verdict(agent, verdict))
                return await self.end(verdict)
            if not isinstance(verdict, Continue) or (  # pyright: ignore[reportUnnecessaryIsInstance] - user code
                verdict.message is not None and type(verdict.message) is not str
            ):
                raise UserError(_bad_verdict(agent, verdict))
            told = None if verdict.message is None else UserMessage(content=verdict.message)
            if told is not None and (saving := self.conversation.add(told)) is not None:
                await saving

    # ------------------------------------------------------------------------------------------ step 1

    async def begin(self, prompt: str | None, history: Sequence[Message]) -> None:
        """The conversation so far, then the prompt. Calls an earlier run left without results (it crashed or
        was cancelled) are answered first: providers require a call's result right after it, and the
        journal answers those that ran and refuses those in doubt."""
        agent, conversation = self.agent, self.conversation
        conversation.messages = [self.system_message, *history]
        self.calls.begin(conversation.turns() if history else 0)
        mode = agent.mode if isinstance(agent.mode, str) else agent.mode(prompt or "")
        self.events.hold = mode == "act_first"
        if (pending := self.events.emit(_wire.chain_start(self.run_id))) is not None:
            await pending
        unanswered = conversation.unanswered() if history else None  # (a new conversation owes nothing)
        if unanswered:
            envelopes = await self.answer_resumed(unanswered)
            if (saving := conversation.add(*_results(unanswered, envelopes))) is not None:
                await saving
        if prompt is not None:  # a str is valid as it is; anything else is validated (and refused)
            user = _wire.user_message(prompt) if type(prompt) is str else UserMessage(content=prompt)
            if (saving := conversation.add(user)) is not None:
                await saving

    async def answer_resumed(self, calls: list[ToolCall]) -> list[AnyEnvelope]:
        """Answers for calls an earlier run left open: from the journal (or by running them), except those
        stored with a secret redacted, which cannot run again (`refusals_for_redacted`)."""
        refused = refusals_for_redacted(calls)
        if not refused:
            return await self.calls.answer(calls)
        for call in calls:
            if call.id in refused:
                await self.calls.finish(call, refused[call.id])  # `on_tool_end`, as a cut-off call gets
        runnable = [c for c in calls if c.id not in refused]
        answers = iter(await self.calls.answer(runnable) if runnable else [])
        return [refused[c.id] if c.id in refused else next(answers) for c in calls]

    # ------------------------------------------------------------------------------------------ step 2

    async def model_turn(self, model: Model) -> TurnResult:
        """One model turn: `model` streams its output while the calls that may start run, then the rest run
        and every result is added to the conversation."""
        agent, calls, conversation = self.agent, self.calls, self.conversation
        calls.begin(calls.turn + 1)
        if (pending := self.events.emit(_wire.model_start(self.run_id, self.run_state.records))) is not None:
            await pending
        offer = self.offer
        parser = self.dialect.stream_parser(offer.index)
        if agent.reasoning_open:
            parser.open_reasoning()
        system = self.system_message.content
        if offer.context:
            system = with_context(system, offer.context, self.run_state.session_id)
        request = ModelRequest(
            conversation.for_model(), offer.specs if agent.native else (), system, agent.dialect
        )
        out = _Output()
        chars = self.budget.chars
        stream = aiter(model.stream(request))
        try:
            await self.read(stream, parser, out)
            for task in calls.stream_ended():
                await task
        except BaseException as error:  # the model failed or the run was cancelled: stop what it started
            with anyio.CancelScope(shield=True):
                await calls.abandon()
                if (aclose := getattr(stream, "aclose", None)) is not None:
                    await aclose()  # the provider's response is released now, not when collected
            if isinstance(error, _ModelFailed):  # another model may take the turn over
                error.before_output = self.budget.chars == chars and not calls.started()
                calls.turn -= 1
            raise
        out.take(parser.close())
        if type(parser).result is _PARSER_RESULT and type(parser).reasoned is _PARSER_REASONED:
            content, called, unreadable = "".join(out.content), out.calls, out.errors
            reasoning = "".join(out.reasoning) if parser.reasoned else None
        else:  # a parser that keeps its result apart from its events (`auto`: its chosen candidate's)
            parsed = parser.result
            content, reasoning, called = parsed.content, parsed.reasoning, parsed.calls
            unreadable = [e.message for e in parsed.errors]
        # Stored before any mutating call runs: after a crash, `resume` finds these calls and the journal
        # says which of them ran.
        said = _wire.assistant_message(content, reasoning, tuple(called), "".join(out.raw))
        if (saving := conversation.add(said)) is not None:
            await saving
        envelopes = await calls.answer(called) if called else []
        if self.events.held:  # act first: the turn's tools are done (or need input), the text can show
            await self.events.release()
        if envelopes and (saving := conversation.add(*_results(called, envelopes))) is not None:
            await saving
        if unreadable:
            problems = "; ".join(unreadable)
            told = UserMessage(content=f"Some of your output could not be read as tool calls: {problems}")
            if (saving := conversation.add(told)) is not None:
                await saving
        return TurnResult(content, called, envelopes, unreadable)

    async def read(self, stream: AsyncIterator[ModelChunk], parser: StreamParser, out: _Output) -> None:
        """Feed the model's events to the parser to the end of the stream, showing its text; calls that may
        start while the model streams are scheduled as each event completes them (`Calls.schedule`). A text
        dialect parses the model's text (`feed`); a native one reads every event (`feed_event`). What the
        events say is kept in `out` (see `_Output`)."""
        following = stream.__anext__
        budget, calls = self.budget, self.calls
        raw, content, called = out.raw, out.content, out.calls
        parses_text = not self.agent.native
        while True:
            try:  # `_next`, inlined: a coroutine call per chunk costs ~0.3 µs
                chunk = await following()
            except StopAsyncIteration:
                return
            except UserError:
                raise
            except Exception as e:
                raise _ModelFailed(e) from e
            if parses_text and type(chunk) is TextChunk:
                text = chunk.text
                raw.append(text)
                written = len(text)
                events = parser.feed(text)
            else:
                text = None
                written = 0
                if type(chunk) is Usage:  # the provider's count replaces the estimate from characters
                    budget.reported(chunk.output_tokens)
                events = parser.feed_event(chunk)
            ready: list[ToolCall] | None = None
            for event in events:
                if type(event) is TextDelta:
                    content.append(event.text)
                    if text is None:  # any other event: count what the model wrote in it
                        written += len(event.text)
                    if event.text and self.visible:
                        shown = self.events.show(_wire.model_stream(self.run_id, event.text))
                        if shown is not None:
                            await shown
                elif type(event) is CallCompleted:
                    called.append(event.call)
                    if calls.streamable(event.call):
                        if ready is None:
                            ready = []
                        ready.append(event.call)
                elif type(event) is CallDelta:
                    if text is None:  # the model's own writing: argument fragments
                        written += len(event.arguments_delta)
                elif type(event) is not CallStarted:  # reasoning or a failure: rare
                    out.take((event,))
                    if text is None and type(event) is ReasoningDelta:
                        written += len(event.text)
            if written:
                budget.wrote(written)  # a limit reached here stops the turn before its calls start
            if ready is not None:
                for call in ready:
                    calls.schedule(call)

    # ------------------------------------------------------------------------------------------ step 4

    async def end(self, verdict: End) -> RunResult:
        output = verdict.output
        if verdict.problem is not None:
            data = {"error": verdict.reason.upper(), "message": verdict.problem}
            if (pending := self.events.emit(ErrorEvent(run_id=self.run_id, data=data))) is not None:
                await pending
        if verdict.reply and self.agent.responder is not None:
            output = await self.respond()
        if self.calls.spoken is not None:
            await self.calls.spoken.finish()
        ended = _wire.chain_end(self.run_id, output, self.run_state.records, verdict.reason)
        if (pending := self.events.emit(ended)) is not None:
            await pending
        return RunResult(output, verdict.reason, self.conversation.messages, self.events.all, self.calls.lags)

    async def failed(self, error: Exception) -> RunResult:
        """The model failed (and so did its stand-in, if any): `error`, then `on_chain_end` (seed 004)."""
        message = str(error) if isinstance(error, ModelError) else f"{type(error).__name__}: {error}"
        error_event = ErrorEvent(run_id=self.run_id, data={"error": "MODEL_ERROR", "message": message})
        if (pending := self.events.emit(error_event)) is not None:
            await pending
        result = await self.end(End(None, "model_error"))
        result.error = error
        return result

    async def cut_off(self, why: str) -> None:
        """Answer the calls a limit stopped before they finished (`TIMEOUT`), keeping the envelopes of those
        that did finish, so that the conversation stays well-formed for the next run."""
        unanswered = self.conversation.unanswered()
        if unanswered:
            envelopes = await self.calls.cut_off(unanswered, why)
            if (saving := self.conversation.add(*_results(unanswered, envelopes))) is not None:
                await saving

    async def respond(self) -> str:
        """Planner -> executor -> responder: the responder writes the reply from the whole conversation; the
        planner stands in when it fails before writing anything."""
        agent = self.agent
        assert agent.responder is not None
        request = ModelRequest(
            messages=[*self.conversation.as_text(), UserMessage(content=RESPOND)],
            system=agent.system_prompt,
        )

        async def reply(model: Model) -> str:
            started = ChatModelStartEvent(run_id=self.run_id, toolCalls=list(self.run_state.records))
            if (pending := self.events.emit(started)) is not None:
                await pending
            parts: list[str] = []
            stream = aiter(model.stream(request))
            try:
                while (chunk := await _next(stream)) is not None:
                    if type(chunk) is TextChunk and chunk.text:  # no tools are offered: text is the reply
                        parts.append(chunk.text)
                        streamed = ChatModelStreamEvent(run_id=self.run_id, data=chunk.text)
                        if (pending := self.events.emit(streamed)) is not None:
                            await pending
            except _ModelFailed as failed:
                failed.before_output = not parts
                raise
            finally:
                if (aclose := getattr(stream, "aclose", None)) is not None:
                    await aclose()
            return "".join(parts)

        text = await self.first_that_works(agent.responder, agent.model, reply)
        if (saving := self.conversation.add(AssistantMessage(content=text))) is not None:
            await saving
        return text

    # ------------------------------------------------------------------------------- model fallback

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


_PARSER_RESULT = StreamParser.result
_PARSER_REASONED = StreamParser.reasoned


class _Output:
    """What the model wrote in one turn, as the parser's events say it: a parser's `result` is what its events
    say (its text deltas join to the content, reasoning deltas to the reasoning, each completed call in order,
    each failure: `tests/dialects/test_stream_equivalence.py`, `tests/loop/test_loop_fast_paths.py`), so the
    turn keeps what it reads anyway, without a `ParseResult` (~9k instructions a model turn, native or text).
    A parser whose `result` is its own (`auto`) is asked for it instead."""

    __slots__ = ("calls", "content", "errors", "raw", "reasoning")

    def __init__(self) -> None:
        self.raw: list[str] = []
        """The text the model wrote (a text dialect's), as it came."""
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[ToolCall] = []
        self.errors: list[str] = []
        """Why each unreadable call could not be read."""

    def take(self, events: Sequence[ParseEvent]) -> None:
        """Keep what `events` say (`read` keeps the usual ones itself, inline)."""
        for event in events:
            if type(event) is TextDelta:
                self.content.append(event.text)
            elif type(event) is CallCompleted:
                self.calls.append(event.call)
            elif type(event) is ReasoningDelta:
                self.reasoning.append(event.text)
            elif type(event) is CallFailed:
                self.errors.append(event.error.message)


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


def _bad_verdict(agent: Agent, verdict: object) -> str:
    return (
        f"the judge of {type(agent.termination).__name__} returned {verdict!r}: a judge returns End(output, "
        "reason) with a str reason, or Continue(message) with a str message or None (tether.loop)."
    )


def _results(calls: Sequence[ToolCall], envelopes: Sequence[AnyEnvelope]) -> list[ToolResultMessage]:
    """Each call's result as the message that follows its call in the conversation."""
    return [_wire.tool_result(c.id, c.name, e) for c, e in zip(calls, envelopes, strict=True)]
