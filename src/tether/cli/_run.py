from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.markup import escape

from tether.builtin import PackConfig, build_tools
from tether.cli._errors import user_errors
from tether.dialects import dialect_names
from tether.exceptions import UserError
from tether.loop import Agent, EndTurn, FinalResponse, Limits, NoCalls, RunResult, Termination
from tether.models import Model, RecordingModel, load_cassette, model_from_name
from tether.tools import AbstractToolset, Toolset, load_tools
from tether.types import (
    ChainEndEvent,
    ChatEvent,
    ChatModelStreamEvent,
    ErrorEnvelope,
    ErrorEvent,
    Event,
    NeedsEnvelope,
    OpenUrlEvent,
    SpeechEvent,
    ToolEndEvent,
    ToolStartEvent,
)

__all__ = [
    "DEFAULTS",
    "BaseUrlOption",
    "DialectOption",
    "EventPrinter",
    "MaxCallsOption",
    "MaxSecondsOption",
    "MaxTokensOption",
    "MaxTurnsOption",
    "ModelOption",
    "PackOption",
    "RootOption",
    "SessionLogOption",
    "ToolsOption",
    "agent_tools",
    "register",
    "replay_cassette",
    "termination_named",
]

# Options `run` and `chat` share.
ModelOption = Annotated[
    str | None, typer.Option(help="provider:name, e.g. openai:gpt-4o-mini or anthropic:claude-sonnet-5-5.")
]
BaseUrlOption = Annotated[
    str | None, typer.Option(help="The provider's server URL, e.g. an OpenAI-compatible one (Ollama, vLLM).")
]
ToolsOption = Annotated[list[str] | None, typer.Option("--tools", "-t", help="Tool sources (repeatable).")]
PackOption = Annotated[list[str] | None, typer.Option(help="Built-in packs: fs, search, exec, memory, web.")]
RootOption = Annotated[list[str] | None, typer.Option(help="Folders the packs may use (default: .).")]
PROVIDER_DIALECTS = ("openai", "anthropic", "gemini")
"""The providers' own tool-calling formats: used by leaving --dialect out, never named by it."""
DialectOption = Annotated[
    str | None,
    typer.Option(
        help="Teach the tools in the prompt in this text dialect: "
        + ", ".join(n for n in dialect_names() if n not in PROVIDER_DIALECTS)
        + ". Default: the model's native tool calling."
    ),
]
DEFAULTS = Limits()
MaxTurnsOption = Annotated[int, typer.Option(min=1, help="Model turns a run may take.")]
MaxCallsOption = Annotated[int, typer.Option(min=1, help="Tool calls a run may make.")]
MaxTokensOption = Annotated[
    int | None, typer.Option(min=1, help="Model output a run may stream, in tokens (~4 characters each).")
]
MaxSecondsOption = Annotated[
    float | None,
    typer.Option(min=0.001, help="Seconds a run may take; the model or tools still working stop."),
]

SessionLogOption = Annotated[
    Path | None,
    typer.Option(
        help="Append every tool call and its result to this markdown file (MOOLLM's session-log.md)."
    ),
]

TERMINATIONS = {"no_calls": NoCalls, "end_turn": EndTurn, "final_response": FinalResponse}


def termination_named(name: str) -> Termination:
    if name not in TERMINATIONS:
        raise UserError(f"--until must be one of {', '.join(TERMINATIONS)}, not {name!r}.")
    return TERMINATIONS[name]()


def agent_tools(
    sources: list[str], packs: list[str], roots: list[str], base: Path = Path()
) -> AbstractToolset:
    """Tools from definition files and modules, plus built-in packs confined to `roots` (relative to `base`)."""
    toolset: AbstractToolset = Toolset()
    workspace = (base / roots[0]).resolve() if roots else None  # where YAML command tools work
    for source in sources:
        toolset = toolset | load_tools(base / source if Path(source).suffix else source, workspace=workspace)
    if packs:
        config = PackConfig(roots=tuple((base / r).resolve() for r in roots or ["."]))
        toolset = toolset | build_tools(packs, config)
    return toolset


def _relative(path: str, start: Path) -> str:
    return os.path.relpath(Path(path).resolve(), start)


class EventPrinter:
    """Shows a run as it happens: streamed text, each tool call with its why, and its envelope."""

    def __init__(self, console: Console, *, show_stream: bool):
        self.console = console
        self.show_stream = show_stream
        self.in_text = False
        self.names: dict[str, str] = {}
        self.last_started: str | None = None
        self.spoken: list[Path] = []
        """Speech files `say` made: the terminal does not play them, so they are deleted (`forget_speech`)."""

    def forget_speech(self) -> None:
        for audio in self.spoken:
            audio.unlink(missing_ok=True)
        self.spoken.clear()

    def _owner(self, call_id: str) -> str:
        """Calls run concurrently: a result that does not follow its own call names the tool it is from."""
        if call_id == self.last_started:
            return ""
        return f"{escape(self.names.get(call_id, call_id))}: "

    def __call__(self, event: Event) -> None:
        c = self.console
        if isinstance(event, ChatModelStreamEvent):
            if self.show_stream:
                c.print(event.data, end="", style="dim", highlight=False, markup=False)
                self.in_text = True
            return
        if self.in_text:
            c.print()
            self.in_text = False
        match event:
            case ToolStartEvent(call=call):
                # most dialects carry `why` as an argument: show it as the why, not twice
                said = call.why if call.why is not None else call.arguments.get("why")
                shown = {k: v for k, v in call.arguments.items() if k != "why" or call.why is not None}
                args = json.dumps(shown, ensure_ascii=False, default=str)
                why = f"  [italic]why: {escape(str(said))}[/]" if said else ""
                c.print(f"[cyan]→ {call.name}[/]({escape(args)}){why}", highlight=False)
                self.names[call.id] = call.name
                self.last_started = call.id
            case ToolEndEvent(call_id=call_id, envelope=ErrorEnvelope(error=error)):
                c.print(f"  [red]✗ {self._owner(call_id)}{error.code}[/] {error.message}", highlight=False)
                if error.suggestion:
                    c.print(f"    [yellow]suggestion:[/] {error.suggestion}", highlight=False)
            case ToolEndEvent(call_id=call_id, envelope=NeedsEnvelope(needs=needs)):
                c.print(f"  [yellow]? {self._owner(call_id)}needs[/] {json.dumps(needs)}", highlight=False)
            case ToolEndEvent(call_id=call_id, envelope=envelope):
                data = json.dumps(getattr(envelope, "data", None), ensure_ascii=False, default=str)
                c.print(f"  [green]✓[/] {self._owner(call_id)}{data[:200]}", highlight=False)
            case ChatEvent(data=text):
                c.print(f"[bold]chat:[/] {text}", highlight=False)
            case SpeechEvent(utterance=text, audio=audio):
                c.print(f"[bold]say:[/] {text}", highlight=False)
                if audio is not None:
                    self.spoken.append(Path(audio))
            case OpenUrlEvent(url=url):
                c.print(f"[bold]open:[/] {url}", highlight=False)
            case ErrorEvent(data=data):
                c.print(f"[red]error:[/] {data.get('message')}", highlight=False)
            case ChainEndEvent(reason="model_error"):
                pass  # the error event said it all
            case ChainEndEvent(reason=reason, data=data):
                out = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
                c.print(f"[bold green]done[/] ({reason}): {out}", highlight=False)
            case _:
                pass


def _run(agent: Agent, prompt: str, console: Console, *, show_stream: bool) -> RunResult:
    printer = EventPrinter(console, show_stream=show_stream)
    try:
        result = anyio.run(lambda: agent.run(prompt, on_event=printer))
    finally:
        printer.forget_speech()
    if result.reason == "model_error":  # the provider or the network failed: its error event, and exit 1
        raise typer.Exit(1) from result.error
    return result


def replay_cassette(path: Path, console: Console) -> RunResult:
    """Run a recorded session again through the real parser, executor and tools."""
    header, model = load_cassette(path)
    agent = Agent(
        model,
        # paths in a cassette are relative to the cassette itself, so it replays from any directory
        agent_tools(
            header.get("tools", []), header.get("packs", []), header.get("roots", []), base=path.parent
        ),
        dialect=header.get("dialect"),
        termination=termination_named(header.get("termination", "no_calls")),
        system_prompt=header.get("system_prompt", ""),
    )
    console.print(f"[bold]user:[/] {header['prompt']}", highlight=False)
    return _run(agent, header["prompt"], console, show_stream=False)


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        prompt: Annotated[str, typer.Argument(help="What to ask.")],
        model: ModelOption = None,
        base_url: BaseUrlOption = None,
        tools: ToolsOption = None,
        pack: PackOption = None,
        root: RootOption = None,
        dialect: DialectOption = None,
        until: Annotated[str, typer.Option(help="no_calls, end_turn or final_response.")] = "no_calls",
        record: Annotated[
            Path | None, typer.Option(help="Save every model response to this cassette.")
        ] = None,
        max_turns: MaxTurnsOption = DEFAULTS.max_iterations,
        max_calls: MaxCallsOption = DEFAULTS.max_tool_calls,
        max_tokens: MaxTokensOption = None,
        max_seconds: MaxSecondsOption = None,
        session_log: SessionLogOption = None,
    ) -> None:
        """Run one prompt through a model, its tools and the loop, showing each call as it happens."""
        console = Console()
        with user_errors():
            sources, packs, roots = tools or [], pack or [], root or []
            chosen: Model = model_from_name(model, base_url=base_url, native_tools=dialect is None)
            if record is not None:
                here = record.resolve().parent
                header: dict[str, Any] = {
                    "prompt": prompt, "dialect": dialect, "termination": until, "packs": packs,
                    # paths relative to the cassette, as replay reads them
                    "tools": [_relative(t, here) if Path(t).suffix else t for t in sources],
                    "roots": [_relative(r, here) for r in roots or ["."]],
                }  # fmt: skip
                chosen = RecordingModel(chosen, record, header)
            agent = Agent(
                chosen,
                agent_tools(sources, packs, roots),
                dialect=dialect,
                termination=termination_named(until),
                limits=Limits(max_turns, max_calls, max_tokens, max_seconds),
                session_log=session_log,
            )
            _run(agent, prompt, console, show_stream=True)

    @app.command("replay")
    def replay(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        cassette: Annotated[Path, typer.Argument(help="A cassette saved with `tether run --record`.")],
    ) -> None:
        """Re-run a recorded session with no network: the real parser, executor and tools, the recorded model."""
        with user_errors():
            replay_cassette(cassette, Console())
