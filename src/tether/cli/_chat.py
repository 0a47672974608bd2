"""`tether chat`: an interactive conversation; streamed text, each tool call live with its why and envelope."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import anyio
import typer
from rich.console import Console
from rich.status import Status
from rich.text import Text

from tether.cli._approval import Approval
from tether.cli._errors import console as plain_console
from tether.cli._errors import leaves, report

# one printer, tool loader and termination for `run` and `chat`
from tether.cli._printer import EventPrinter, stopped
from tether.cli._run import (
    DEFAULTS,
    BaseUrlOption,
    ConfirmOption,
    DialectOption,
    JournalOption,
    MaxCallsOption,
    MaxSecondsOption,
    MaxTokensOption,
    MaxTurnsOption,
    McpOption,
    McpUrlOption,
    ModelOption,
    PackOption,
    ReadOnlyOption,
    ReasoningOpenOption,
    RootOption,
    SessionLogOption,
    ToolsOption,
    agent_tools,
    closing,
    guarded,
    mcp_servers,
    pack_principal,
    termination_named,
)
from tether.exceptions import UserError
from tether.loop import Agent, Limits, RunResult
from tether.models import Model, load_cassette, model_from_name
from tether.tools import AbstractToolset
from tether.types import (
    ChainEndEvent,
    Event,
    Message,
    SystemMessage,
    ToolEndEvent,
    ToolStartEvent,
)

__all__ = ["register"]

EXIT_COMMANDS = frozenset({"/exit", "/quit"})
LOUD_ENDS = frozenset({"final_response"})
"""Reasons a turn ends with a `done` line: its answer (JSON in a required format) was not streamed. A turn
that ends normally was (or was sent as chat events); one that stopped early is explained after it."""


class _ChatPrinter(EventPrinter):
    """`tether run`'s printer, plus a spinner while tools run."""

    def __init__(self, console: Console):
        super().__init__(console, show_stream=True)
        self.running: dict[str, str] = {}
        self.status: Status | None = None

    def __call__(self, event: Event) -> None:
        match event:
            case ToolStartEvent(call=call):
                super().__call__(event)
                self.running[call.id] = call.name
                self.spin()
            case ToolEndEvent(call_id=call_id):
                self.running.pop(call_id, None)
                self.spin()
                super().__call__(event)
            case ChainEndEvent(reason=reason) if reason not in LOUD_ENDS:
                self.close()
            case _:
                super().__call__(event)

    def spin(self) -> None:
        if not self.running:
            self.stop()
            return
        label = Text(f"running {', '.join(dict.fromkeys(self.running.values()))}…")
        if self.status is None:
            self.status = self.console.status(label)
            self.status.start()
        else:
            self.status.update(label)

    def pause(self) -> None:
        self.stop()

    def resume(self) -> None:
        self.spin()

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def close(self) -> None:
        """End the turn's output: no spinner left behind, the cursor on a fresh line."""
        self.running.clear()
        self.stop()
        self.end_line()


def _turn(agent: Agent, line: str, history: list[Message], printer: _ChatPrinter) -> RunResult | None:
    """One user line to the end of its run; None when it was cancelled or failed (the history stays as it was)."""
    try:
        result = anyio.run(lambda: agent.run(line, history=history, on_event=printer))
    except KeyboardInterrupt:
        printer.close()
        printer.console.print(Text("cancelled", "yellow"))
    except Exception as e:
        printer.close()
        found = leaves(e)
        for leaf in found:
            if isinstance(leaf, UserError):
                raise leaf from e  # a developer's mistake ends the session, as one clear line
        for leaf in found:  # a provider's or a network's failure ends only this turn
            report(f"{type(leaf).__name__}: {leaf}")
    else:
        printer.close()
        if result.reason == "model_error":  # a provider's or a network's failure (its error event was shown)
            return None  # ends only this turn
        why = stopped(result, agent.limits)
        if why is not None:  # the conversation goes on from where the turn stopped
            report(why)
        return result
    finally:
        printer.forget_speech()
    return None


def _chat(agent: Agent, printer: _ChatPrinter) -> None:
    history: list[Message] = []
    printer.toolset = agent.toolset
    console = printer.console
    console.print(
        Text.assemble(("tether chat", "bold"), f" with {agent.model.name}: /exit or Ctrl-D to leave.")
    )
    while True:
        try:
            line = console.input(Text("you> ", "bold green")).strip()
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
        result = _turn(agent, line, history, printer)
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
        mcp: McpOption = None,
        mcp_url: McpUrlOption = None,
        dialect: DialectOption = None,
        reasoning_open: ReasoningOpenOption = False,
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
        journal: JournalOption = None,
        read_only: ReadOnlyOption = False,
        confirm: ConfirmOption = False,
    ) -> None:
        """Talk with a model and its tools: each line continues the conversation; Ctrl-C cancels a turn.

        With --confirm, each call to a tool with side effects waits for your y/n.
        """
        printer = _ChatPrinter(plain_console())
        servers = mcp_servers(mcp, mcp_url)  # each turn is an event loop of its own: the servers keep theirs
        toolset: AbstractToolset = agent_tools(
            tools or [], pack or [], root or [], read_only=read_only, servers=servers
        )
        chosen: Model
        if replay is not None:
            header, chosen = load_cassette(replay)
            # the cassette's paths are relative to itself, as `tether replay` reads them
            recorded = agent_tools(
                header.get("tools", []),
                header.get("packs", []),
                header.get("roots", []),
                base=replay.parent,
                read_only=read_only,
            )
            toolset = recorded | toolset
            dialect = dialect or header.get("dialect")
            reasoning_open = reasoning_open or bool(header.get("reasoning_open"))
            until = until or header.get("termination")
            system = system or header.get("system_prompt", "")
        else:
            chosen = model_from_name(model, base_url=base_url, native_tools=dialect is None)
        approval = Approval(printer.approve) if confirm else None
        agent = Agent(
            chosen,
            toolset,
            dialect=dialect,
            reasoning_open=reasoning_open,
            termination=termination_named(until or "no_calls"),
            system_prompt=system,
            limits=Limits(max_turns, max_calls, max_tokens, max_seconds),
            executor=guarded(toolset, journal=journal, approval=approval, session_log=session_log),
            principal=pack_principal(pack or []),
        )
        with closing(servers):
            _chat(agent, printer)
