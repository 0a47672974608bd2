"""An agent: a model, a dialect, tools and the rules its runs follow (each run is an `AgentRun`, in `_loop`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tether.dialects import render_tools, stream_parser
from tether.exceptions import UserError
from tether.execution import Executor, Policy, Principal, SessionLog
from tether.loop._core import core_tools
from tether.loop._events import EventHandler
from tether.loop._fallback import Fallback
from tether.loop._limits import Limits
from tether.loop._loop import AgentRun
from tether.loop._modes import Mode, ModeChooser
from tether.loop._offer import Offer
from tether.loop._result import RunResult
from tether.loop._session import Session
from tether.loop._termination import Termination, termination_for
from tether.models import Model, model_from_name
from tether.tools import AbstractToolset, ToolsLike, as_toolset
from tether.types import Message, SystemMessage, ToolSpec

__all__ = ["Agent", "RunResult"]


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
        termination: How a run ends: `NoCalls()` (default), `EndTurn()` (seed 000), `FinalResponse(schema)`
            (seed 003), or your own policy (see `Termination`).
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
        core = self.termination.core_tools
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
        self._offer: Offer | None = None

    def offer(self) -> Offer:
        """The tools as a run uses them, worked out again only when the toolset changes."""
        offer, toolset = self._offer, self.toolset
        if offer is None or not offer.current(toolset):
            offer = self._offer = Offer(toolset, toolset.tools())
        return offer

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
        run = AgentRun(self, on_event, session, self.deps if deps is None else deps)
        return await run.run(prompt, [m for m in history if m.kind != "system"] if history else [])

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
        return await AgentRun(self, on_event, session, self.deps).run(
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
