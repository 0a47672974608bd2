"""`tether chat`: an interactive conversation; streamed text, each tool call live with its why and envelope."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import anyio
import typer
from rich.console import Console
from rich.markup import escape
from rich.status import Status

from tether.cli._errors import user_errors

# one printer, tool loader and termination for `run` and `chat`
from tether.cli._run import (
    DEFAULTS,
    BaseUrlOption,
    DialectOption,
    EventPrinter,
    MaxCallsOption,
    MaxSecondsOption,
    MaxTokensOption,
    MaxTurnsOption,
    ModelOption,
    PackOption,
    RootOption,
    SessionLogOption,
    ToolsOption,
    agent_tools,
    termination_named,
)
from tether.exceptions import UserError
from tether.loop import Agent, Limits, RunResult
from tether.models import Model, load_cassette, model_from_name
from tether.tools import AbstractToolset
from tether.types import (
    ChainEndEvent,
    ChatModelStreamEvent,
    Event,
    Message,
    SystemMessage,
    ToolEndEvent,
    ToolStartEvent,
)

__all__ = ["register"]

EXIT_COMMANDS = frozenset({"/exit", "/quit"})
QUIET_ENDS = frozenset({"no_calls", "end_turn"})
"""Reasons a turn ends normally: its answer was already streamed (or sent as chat events)."""


class _ChatPrinter(EventPrinter):
    """`tether run`'s printer, plus a spinner while tools run; the streamed answer is the reply, not dimmed."""

    def __init__(self, console: Console):
        super().__init__(console, show_stream=True)
        self.running: dict[str, str] = {}
        self.status: Status | None = None

    def __call__(self, event: Event) -> None:
        match event:
            case ChatModelStreamEvent(data=text):
                self.console.print(text, end="", highlight=False, markup=False)
                self.in_text = True
            case ToolStartEvent(call=call):
                super().__call__(event)
                self.running[call.id] = call.name
                self.spin()
            case ToolEndEvent(call_id=call_id):
                self.running.pop(call_id, None)
                self.spin()
                super().__call__(event)
            case ChainEndEvent(reason=reason) if reason in QUIET_ENDS:
                self.close()
            case _:
                super().__call__(event)

    def spin(self) -> None:
        if not self.running:
            self.stop()
            return
        label = f"running {escape(', '.join(dict.fromkeys(self.running.values())))}…"
        if self.status is None:
            self.status = self.console.status(label)
            self.status.start()
        else:
            self.status.update(label)

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def close(self) -> None:
        """End the turn's output: no spinner left behind, the cursor on a fresh line."""
        self.running.clear()
        self.stop()
        if self.in_text:
            self.console.print()
            self.in_text = False


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside task-group exception groups."""
    if isinstance(error, BaseExceptionGroup):
        inner = cast(tuple[BaseException, ...], error.exceptions)  # pyright: ignore[reportUnknownMemberType]
        return [leaf for e in inner for leaf in _leaves(e)]
    return [error]


def _turn(agent: Agent, line: str, history: list[Message], console: Console) -> RunResult | None:
    """One user line to the end of its run; None when it was cancelled or failed (the history stays as it was)."""
    printer = _ChatPrinter(console)
    try:
        result = anyio.run(lambda: agent.run(line, history=history, on_event=printer))
        # a provider's or a network's failure (its error event was shown) ends only this turn
        return None if result.reason == "model_error" else result
    except KeyboardInterrupt:
        printer.close()
        console.print("[yellow]cancelled[/]")
    except Exception as e:
        printer.close()
        leaves = _leaves(e)
        for leaf in leaves:
            if isinstance(leaf, UserError):
                raise leaf from e  # a developer's mistake ends the session, as one clear line
        for leaf in leaves:  # a provider's or a network's failure ends only this turn
            console.print(f"[red]error:[/] {escape(f'{type(leaf).__name__}: {leaf}')}", highlight=False)
    finally:
        printer.forget_speech()
    return None


def _chat(agent: Agent, console: Console) -> None:
    history: list[Message] = []
    console.print(
        f"[bold]tether chat[/] with {escape(agent.model.name)}: /exit or Ctrl-D to leave.", highlight=False
    )
    while True:
        try:
            line = console.input("[bold green]you>[/] ").strip()
        except EOFError:
            console.print()
            return
        except KeyboardInterrupt:
            console.print("\n(/exit or Ctrl-D to leave)")
            continue
        if line in EXIT_COMMANDS:
            return
        if not line:
            continue
        result = _turn(agent, line, history, console)
        if result is not None:
            history = [m for m in result.messages if not isinstance(m, SystemMessage)]


def register(app: typer.Typer) -> None:
    @app.command("chat")
    def chat(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        model: ModelOption = None,
        base_url: BaseUrlOption = None,
        tools: ToolsOption = None,
        pack: PackOption = None,
        root: RootOption = None,
        dialect: DialectOption = None,
        until: Annotated[
            str | None, typer.Option(help="When a turn ends: no_calls (default), end_turn or final_response.")
        ] = None,
        system: Annotated[str, typer.Option(help="The system prompt.")] = "",
        replay: Annotated[
            Path | None,
            typer.Option(
                help="Answer with a cassette's recorded model turns, one per model turn, instead of a live "
                "model; its dialect, tools and packs apply too."
            ),
        ] = None,
        max_turns: MaxTurnsOption = DEFAULTS.max_iterations,
        max_calls: MaxCallsOption = DEFAULTS.max_tool_calls,
        max_tokens: MaxTokensOption = None,
        max_seconds: MaxSecondsOption = None,
        session_log: SessionLogOption = None,
    ) -> None:
        """Talk with a model and its tools: each line continues the conversation; Ctrl-C cancels a turn."""
        console = Console(emoji=False)  # `:x:` in a name or a tool's output is text
        with user_errors():
            toolset: AbstractToolset = agent_tools(tools or [], pack or [], root or [])
            chosen: Model
            if replay is not None:
                header, chosen = load_cassette(replay)
                # the cassette's paths are relative to itself, as `tether replay` reads them
                recorded = agent_tools(
                    header.get("tools", []),
                    header.get("packs", []),
                    header.get("roots", []),
                    base=replay.parent,
                )
                toolset = recorded | toolset
                dialect = dialect or header.get("dialect")
                until = until or header.get("termination")
                system = system or header.get("system_prompt", "")
            else:
                chosen = model_from_name(model, base_url=base_url, native_tools=dialect is None)
            agent = Agent(
                chosen,
                toolset,
                dialect=dialect,
                termination=termination_named(until or "no_calls"),
                system_prompt=system,
                limits=Limits(max_turns, max_calls, max_tokens, max_seconds),
                session_log=session_log,
            )
            _chat(agent, console)
