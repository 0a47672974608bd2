"""An `agent_config.v2` entry -> a `ServedAgent`: its model, dialect, tools, termination, mode, limits, policy.

The model and the tools are made once, when the config is read (a bad name fails at start, not at the
first message); each run gets its own `Agent` for its principal, over one executor per server database.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.builtin import PackConfig, build_tools, packs
from tether.exceptions import UserError
from tether.execution import Executor, Policy, Principal
from tether.loop import (
    Agent,
    EndTurn,
    FinalResponse,
    Limits,
    Mode,
    ModeChooser,
    NoCalls,
    Termination,
    actionable_intent,
)
from tether.models import Model, model_from_name
from tether.serve._config import ServedAgent, problems
from tether.serve._demo import DEMO_MODEL, DemoModel
from tether.store import Journal
from tether.tools import AbstractToolset, Toolset, load_tools
from tether.types import AgentConfig, AgentToolConfig

__all__ = ["default_agent", "served_agent"]

DEFAULT_WALL_TIME_S = 600.0
"""A run's time limit when its config sets none: an upstream that stops answering does not hold a stream
(and its session) for ever."""

_TERMINATIONS: dict[str, Callable[[], Termination]] = {
    "no_calls": NoCalls,
    "end_turn": EndTurn,
    "final_response": FinalResponse,
}


class _Extras(BaseModel):
    """tether's additions to an `agent_config.v2` entry."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["talk_first", "act_first", "actionable_intent"] = "talk_first"
    policy: dict[str, Any] = Field(default_factory=dict[str, Any])
    """`tether.execution.Policy` fields, e.g. `{max_concurrency: 4, default_timeout_s: 30}`."""
    baseUrl: str | None = None
    """The model provider's server, e.g. an OpenAI-compatible one (Ollama, vLLM, llama.cpp)."""


_EXTRAS = frozenset(_Extras.model_fields)
_KNOWN = frozenset(AgentConfig.model_fields) | _EXTRAS


def served_agent(entry: dict[str, Any], where: str, base: Path) -> ServedAgent:
    """The agent described by `entry` (paths relative to `base`); `where` prefixes every error message."""
    unknown = sorted(set(entry) - _KNOWN)
    if unknown:
        raise UserError(
            f"{where}: unknown field {', '.join(unknown)}; an agent takes {', '.join(sorted(_KNOWN))}."
        )
    try:
        config = AgentConfig.model_validate({k: v for k, v in entry.items() if k not in _EXTRAS})
        extras = _Extras.model_validate({k: v for k, v in entry.items() if k in _EXTRAS})
    except ValidationError as error:
        raise UserError(problems(error, f"{where}.")) from None
    try:
        policy = Policy.model_validate(extras.policy)
    except ValidationError as error:
        raise UserError(problems(error, f"{where}.policy.")) from None
    where = f"{where} ({config.name})"
    servers: list[Any] = []
    try:
        model = _model(config, extras.baseUrl)
        tools = _tools(config.tools, base, where, servers)
    except UserError as error:
        raise UserError(f"{where}: {error}") from None
    limits = _limits(config)
    termination = _TERMINATIONS[config.termination]
    mode: Mode | ModeChooser = actionable_intent if extras.mode == "actionable_intent" else extras.mode
    executors: dict[int, Executor] = {}

    def build(principal: Principal, journal: Journal) -> Agent:
        executor = executors.get(id(journal))
        if executor is None:  # one per database: calls in flight are known to every run of the agent
            executor = executors[id(journal)] = Executor(tools, policy=policy, journal=journal)
        return Agent(
            model,
            dialect=config.dialect,
            termination=termination(),
            limits=limits,
            system_prompt=config.systemPrompt,
            executor=executor,
            principal=principal,
            mode=mode,
        )

    return ServedAgent(config.name, build, config.description or "", connections=tuple(servers))


def default_agent(root: Path) -> ServedAgent:
    """The embedded default: the offline demo model, reading (never writing) the files under `root`."""
    entry: dict[str, Any] = {
        "name": "demo",
        "description": "tether's offline demo: lists the files it may read. No model key needed.",
        "model": DEMO_MODEL,
        "dialect": "hermes",
        "tools": [
            {"toolType": "fs", "toolName": "files", "config": {"roots": [str(root)], "readOnly": True}}
        ],
    }
    return served_agent(entry, "the default agent", root)


def _model(config: AgentConfig, base_url: str | None) -> Model:
    if config.model == DEMO_MODEL:
        return DemoModel()
    if config.dialect is not None and config.dialect in ("openai", "anthropic", "gemini"):
        raise UserError(
            f"dialect {config.dialect!r} is a provider's native tool calling: leave `dialect` out to use it."
        )
    return model_from_name(config.model, base_url=base_url, native_tools=config.dialect is None)


def _limits(config: AgentConfig) -> Limits:
    given = config.limits
    default = Limits()
    return Limits(
        max_iterations=given.maxIterations or default.max_iterations,
        max_tool_calls=given.maxToolCalls or default.max_tool_calls,
        max_tokens=given.maxTokens or default.max_tokens,
        max_wall_time_s=given.maxWallTimeS or DEFAULT_WALL_TIME_S,
        retry_budget=default.retry_budget if given.retryBudget is None else given.retryBudget,
    )


class _PackOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    roots: list[str] = Field(default_factory=lambda: ["."])
    readOnly: bool = False
    autoexec: bool = False
    network: bool = False
    allowedHosts: list[str] = Field(default_factory=list[str])


class _FileOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str


class _McpOptions(BaseModel):
    """An `mcp` tool's config: one server, by `command` (run in the config file's folder) or by `url`."""

    model_config = ConfigDict(extra="forbid")

    command: str | list[str] | None = None
    env: dict[str, str] = Field(default_factory=dict[str, str])
    """Variables for a command's process, added to the few the SDK passes on (PATH, HOME, ...)."""
    url: str | None = None
    transport: Literal["http", "sse"] = "http"
    """How to speak to a `url`: streamable HTTP, or the legacy HTTP+SSE transport."""
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    """Sent with every HTTP request, e.g. `{Authorization: "Bearer ..."}`."""
    prefix: str | None = None
    """Names the server's tools `prefix.name`, e.g. `time` -> `time.get_current_time`."""


def _tools(configs: list[AgentToolConfig], base: Path, where: str, servers: list[Any]) -> AbstractToolset:
    """The agent's tools; the MCP servers among them are added to `servers` (the app opens them)."""
    toolset: AbstractToolset = Toolset()
    known = packs()
    for i, tool in enumerate(configs):
        here = f"tools[{i}] ({tool.toolName})"
        try:
            if tool.toolType in known:
                options = _PackOptions.model_validate(tool.config)
                pack_config = PackConfig(
                    roots=tuple((base / r).resolve() for r in options.roots),
                    autoexec=options.autoexec,
                    network=options.network,
                    http_allowed_hosts=tuple(options.allowedHosts),
                )
                built: AbstractToolset = build_tools([tool.toolType], pack_config)
                if options.readOnly:
                    built = built.filtered(lambda t: t.spec.side_effects == "none")
            elif tool.toolType == "file":
                source = _FileOptions.model_validate(tool.config).path
                built = load_tools(base / source if Path(source).suffix else source, workspace=base)
            elif tool.toolType == "mcp":
                built = _mcp(_McpOptions.model_validate(tool.config), base, servers)
            else:
                raise UserError(
                    f"toolType {tool.toolType!r} is not a tool source: use a pack ({', '.join(sorted(known))}), "
                    "`file` (config: {path: tools.py}) or `mcp` (config: {command: ...} or {url: ...})."
                )
        except ValidationError as error:
            raise UserError(problems(error, f"{here}.config.")) from None
        except UserError as error:
            raise UserError(f"{here}: {error}") from None
        toolset = toolset | built
    return toolset


def _mcp(options: _McpOptions, base: Path, servers: list[Any]) -> AbstractToolset:
    if (options.command is None) == (options.url is None):
        raise UserError("an `mcp` tool needs exactly one of config.command or config.url.")
    if options.command is not None and (options.headers or options.transport != "http"):
        raise UserError("config.headers and config.transport are for a `url`; a `command` takes `env`.")
    if options.url is not None and options.env:
        raise UserError("config.env is for a `command`; a `url` takes `headers`.")
    try:
        from tether.mcp import MCPToolset  # the optional MCP SDK, imported only when a config asks for it
    except ImportError:
        raise UserError("MCP servers need the mcp extra: pip install 'tether[mcp]'.") from None
    if options.command is not None:
        server = MCPToolset.stdio(options.command, env=options.env, cwd=base)
    elif options.transport == "sse":
        server = MCPToolset.sse(str(options.url), headers=options.headers)
    else:
        server = MCPToolset.http(str(options.url), headers=options.headers)
    servers.append(server)
    return server.prefixed(options.prefix) if options.prefix else server
