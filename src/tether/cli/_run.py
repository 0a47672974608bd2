from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.text import Text

from tether.builtin import agent_tools as build_agent_tools
from tether.cli._approval import Approval
from tether.cli._errors import console as plain_console
from tether.cli._errors import fail
from tether.cli._journal import open_journal
from tether.cli._printer import EventPrinter, stopped
from tether.dialects import dialect_names
from tether.exceptions import UserError
from tether.execution import Executor, Principal, SessionLog
from tether.loop import Agent, EndTurn, FinalResponse, Limits, NoCalls, RunResult, Termination
from tether.models import Model, RecordingModel, load_cassette, model_from_name
from tether.tools import AbstractToolset

if TYPE_CHECKING:
    from tether.mcp import MCPToolset

__all__ = [
    "DEFAULTS",
    "BaseUrlOption",
    "ConfirmOption",
    "DialectOption",
    "JournalOption",
    "MaxCallsOption",
    "MaxSecondsOption",
    "MaxTokensOption",
    "MaxTurnsOption",
    "McpOption",
    "McpUrlOption",
    "ModelOption",
    "PackOption",
    "ReadOnlyOption",
    "RootOption",
    "SessionLogOption",
    "ToolsOption",
    "agent_tools",
    "closing",
    "guarded",
    "mcp_servers",
    "opened",
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
PackOption = Annotated[
    list[str] | None,
    typer.Option(help="Tool packs: fs, search, exec, memory, web; google, meowstik (the google extra)."),
]
RootOption = Annotated[list[str] | None, typer.Option(help="Folders the packs may use (default: .).")]
McpOption = Annotated[
    list[str] | None,
    typer.Option(
        "--mcp", help='An MCP server to start and use, as a command: "uvx mcp-server-time" (repeatable).'
    ),
]
McpUrlOption = Annotated[
    list[str] | None,
    typer.Option("--mcp-url", help="An MCP server to use at a streamable HTTP URL (repeatable)."),
]
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
ReasoningOpenOption = Annotated[
    bool,
    typer.Option(
        "--reasoning-open",
        help="The model's chat template already opens its reasoning block (the prompt ends with <think>): "
        "its output begins inside it, and calls written there are not run. Needs --dialect.",
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
JournalOption = Annotated[
    str | None,
    typer.Option(
        "--journal",
        envvar="TETHER_JOURNAL_URL",
        help="Keep every tool call in this journal for `tether audit`, e.g. sqlite:///runs.db.",
    ),
]
ReadOnlyOption = Annotated[
    bool,
    typer.Option(
        "--read-only", help="Offer only tools without side effects (fs.read and fs.ls, not fs.write, ...)."
    ),
]
ConfirmOption = Annotated[
    bool,
    typer.Option(
        "--confirm",
        help="Ask y/n in the terminal before each call to a tool with side effects. Where no one can "
        "answer (`run` with stdin not a terminal), such calls are refused and the model is told why.",
    ),
]

TERMINATIONS = {"no_calls": NoCalls, "end_turn": EndTurn, "final_response": FinalResponse}


def termination_named(name: str) -> Termination:
    if name not in TERMINATIONS:
        raise UserError(f"--until must be one of {', '.join(TERMINATIONS)}, not {name!r}.")
    return TERMINATIONS[name]()


def agent_tools(
    sources: list[str],
    packs: list[str],
    roots: list[str],
    base: Path = Path(),
    *,
    read_only: bool = False,
    servers: Sequence[AbstractToolset] = (),
) -> AbstractToolset:
    """`tether.builtin.agent_tools`, plus the tools of MCP `servers` (see `mcp_servers`)."""
    return build_agent_tools(sources, packs, roots, base, read_only=read_only, extra=servers)


def mcp_servers(commands: list[str] | None, urls: list[str] | None) -> list[MCPToolset]:
    """The MCP servers of `--mcp` commands and `--mcp-url` URLs, not started yet: a command opens them for
    its whole run with `opened` (on its event loop), or closes them at its end with `closing`."""
    if not commands and not urls:
        return []
    from tether.mcp import MCPToolset  # the optional MCP SDK, imported only when asked for

    return [MCPToolset.stdio(c) for c in commands or []] + [MCPToolset.http(u) for u in urls or []]


@asynccontextmanager
async def opened(servers: Sequence[MCPToolset]) -> AsyncIterator[None]:
    """Each server connected on this event loop for the block, and stopped at its end (however it ends)."""
    async with AsyncExitStack() as stack:
        for server in servers:
            await stack.enter_async_context(server)
        yield


@contextmanager
def closing(servers: Sequence[MCPToolset]) -> Iterator[None]:
    """Every server stopped at the block's end, for commands that run one event loop per turn (`chat`)."""
    try:
        yield
    finally:
        for server in servers:
            server.close()


def pack_principal(packs: list[str]) -> Principal | None:
    """Who the packs act for: with the google pack, the signed-in Google account and the tether scopes its
    grant satisfies (`tether auth google`); otherwise the agent's anonymous default."""
    if "google" not in packs:
        return None
    from tether.packs.google import google_principal  # imports nothing of Google's

    return google_principal()


def guarded(
    tools: AbstractToolset, *, journal: str | None, approval: Approval | None, session_log: Path | None
) -> Executor:
    """An executor over `tools` that keeps each call in the journal at `journal` (else in memory), asks
    `approval` first, and logs to `session_log` (MOOLLM's session-log.md). The agent adds its core tools."""
    return Executor(
        tools,
        journal=open_journal(journal, existing=False) if journal is not None else None,
        guards=[approval] if approval is not None else [],
        recorders=[SessionLog(session_log)] if session_log is not None else [],
    )


def _relative(path: str, start: Path) -> str:
    return os.path.relpath(Path(path).resolve(), start)


def _at_terminal() -> bool:
    """Whether someone can answer a question: with stdin piped, calls that need approval are refused."""
    return sys.stdin.isatty()


def _run(agent: Agent, prompt: str, printer: EventPrinter, servers: Sequence[MCPToolset] = ()) -> RunResult:
    """The run to its end, with its MCP `servers` connected on its event loop for the run's lifetime; exit 1
    with one line when it stopped before the model finished."""
    printer.toolset = agent.toolset

    async def run() -> RunResult:
        async with opened(servers):
            return await agent.run(prompt, on_event=printer)

    try:
        result = anyio.run(run)
    finally:
        printer.end_line()
        printer.forget_speech()
    if result.reason == "model_error":  # the provider or the network failed: its error event said so
        raise typer.Exit(1) from result.error
    why = stopped(result, agent.limits)
    if why is not None:
        fail(why, code=1)
    return result


def replay_cassette(path: Path, console: Console) -> RunResult:
    """Run a recorded session again through the real parser, executor and tools."""
    header, model = load_cassette(path)
    prompt = header.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise UserError(
            f"{path} has no prompt to replay: `tether replay` takes a cassette saved by `tether run --record`; "
            "replay a recorded chat with `tether chat --replay`."
        )
    agent = Agent(
        model,
        # paths in a cassette are relative to the cassette itself, so it replays from any directory
        agent_tools(
            header.get("tools", []), header.get("packs", []), header.get("roots", []), base=path.parent
        ),
        dialect=header.get("dialect"),
        reasoning_open=bool(header.get("reasoning_open")),
        termination=termination_named(header.get("termination") or "no_calls"),
        system_prompt=header.get("system_prompt", ""),
    )
    console.print(Text.assemble(("user:", "bold"), f" {prompt}"))
    return _run(agent, prompt, EventPrinter(console, show_stream=False))


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        prompt: Annotated[str, typer.Argument(help="What to ask.")],
        model: ModelOption = None,
        base_url: BaseUrlOption = None,
        tools: ToolsOption = None,
        pack: PackOption = None,
        root: RootOption = None,
        mcp: McpOption = None,
        mcp_url: McpUrlOption = None,
        dialect: DialectOption = None,
        reasoning_open: ReasoningOpenOption = False,
        until: Annotated[str, typer.Option(help="no_calls, end_turn or final_response.")] = "no_calls",
        record: Annotated[
            Path | None,
            typer.Option(
                help="Save every model response to this cassette, verbatim: secrets the model wrote included."
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
        """Run one prompt through a model, its tools and the loop, showing each call as it happens.

        Exits 1 when the run stops before the model finished (a limit, a provider's failure), saying why.
        """
        if not prompt.strip():
            raise UserError(
                'The prompt is empty: say what to ask, e.g. tether run "Which files mention TODO?".'
            )
        printer = EventPrinter(plain_console(), show_stream=True)
        sources, packs, roots = tools or [], pack or [], root or []
        chosen: Model = model_from_name(model, base_url=base_url, native_tools=dialect is None)
        if record is not None:
            here = record.resolve().parent
            header: dict[str, Any] = {
                "prompt": prompt, "dialect": dialect, "reasoning_open": reasoning_open, "termination": until,
                "packs": packs,
                # paths relative to the cassette, as replay reads them
                "tools": [_relative(t, here) if Path(t).suffix else t for t in sources],
                "roots": [_relative(r, here) for r in roots or ["."]],
            }  # fmt: skip
            chosen = RecordingModel(chosen, record, header)
        servers = mcp_servers(mcp, mcp_url)
        toolset = agent_tools(sources, packs, roots, read_only=read_only, servers=servers)
        approval = Approval(printer.approve if _at_terminal() else None) if confirm else None
        agent = Agent(
            chosen,
            toolset,
            dialect=dialect,
            reasoning_open=reasoning_open,
            termination=termination_named(until),
            limits=Limits(max_turns, max_calls, max_tokens, max_seconds),
            executor=guarded(toolset, journal=journal, approval=approval, session_log=session_log),
            principal=pack_principal(packs),
        )
        _run(agent, prompt, printer, servers)

    @app.command("replay")
    def replay(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        cassette: Annotated[Path, typer.Argument(help="A cassette saved with `tether run --record`.")],
    ) -> None:
        """Re-run a recorded session with no network: the real parser, executor and tools, the recorded model."""
        replay_cassette(cassette, plain_console())
