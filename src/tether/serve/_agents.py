"""An `agent_config.v3` entry -> a `ServedAgent`: its model and responder, dialect, tools, termination, mode,
limits and policy.

The model and the tools are made once, when the config is read (a bad name fails at start, not at the
first message); each run gets its own `Agent` for its principal, over one executor per server database.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.builtin import PackConfig, agent_tools, packs
from tether.dialects import dialect_names
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
from tether.serve._config import ServedAgent, check_fields, problems
from tether.serve._demo import DEMO_MODEL, DemoModel
from tether.store import Journal
from tether.tools import AbstractToolset, Toolset
from tether.types import AgentConfigV3, AgentToolConfig

__all__ = ["default_agent", "served_agent"]

DEFAULT_WALL_TIME_S = 600.0
"""A run's time limit when its config sets none: an upstream that stops answering does not hold a stream
(and its session) for ever."""

_TERMINATIONS: dict[str, Callable[[], Termination]] = {
    "no_calls": NoCalls,
    "end_turn": EndTurn,
    "final_response": FinalResponse,
}


def served_agent(entry: dict[str, Any], where: str, base: Path) -> ServedAgent:
    """The agent described by `entry`, an `agent_config.v3` object (v2 is a part of v3); paths are relative
    to `base` and `where` prefixes every error message."""
    check_fields(entry, AgentConfigV3, where)
    try:
        config = AgentConfigV3.model_validate(entry)
    except ValidationError as error:
        raise UserError(problems(error, f"{where}.")) from None
    check_fields(config.policy, Policy, f"{where}.policy")
    try:
        policy = Policy.model_validate(config.policy)
    except ValidationError as error:
        raise UserError(problems(error, f"{where}.policy.")) from None
    if config.dialect is not None and config.dialect not in dialect_names():
        raise UserError(f"{where}.dialect: {_no_dialect(config.dialect)}")
    where = f"{where} ({config.name})"
    servers: list[Any] = []
    try:
        model = _model(config.model, config.baseUrl, config.dialect)
        responder = _responder(config)
        tools = _tools(config.tools, base, where, servers)
    except UserError as error:
        raise UserError(f"{where}: {error}") from None
    limits = _limits(config)
    termination = _TERMINATIONS[config.termination]
    mode: Mode | ModeChooser = actionable_intent if config.mode == "actionable_intent" else config.mode
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
            responder=responder,
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


def _model(name: str, base_url: str | None, dialect: str | None) -> Model:
    if name == DEMO_MODEL:
        return DemoModel()
    if dialect is not None and dialect in ("openai", "anthropic", "gemini"):
        raise UserError(
            f"dialect {dialect!r} is a provider's native tool calling: leave `dialect` out to use it."
        )
    try:
        return model_from_name(name, base_url=base_url, native_tools=dialect is None)
    except UserError:
        raise
    except Exception as error:  # a provider SDK refusing its settings (credentials, a malformed URL)
        raise UserError(f"the model {name!r} cannot be set up: {type(error).__name__}: {error}") from None


def _responder(config: AgentConfigV3) -> Model | None:
    """The responder (planner -> executor -> responder), made as the planner is, so that either can stand in
    for the other."""
    given = config.responder
    if given is None:
        return None
    name, base_url = (given, None) if isinstance(given, str) else (given.model, given.baseUrl)
    try:
        return _model(name, base_url, config.dialect)
    except UserError as error:
        raise UserError(f"responder: {error}") from None


def _no_dialect(name: str) -> str:
    known = dialect_names()
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean {close[0]!r}?" if close else f"one of {', '.join(known)}."
    return f"no dialect {name!r}; {hint} Leave `dialect` out for the model's native tool calling."


def _limits(config: AgentConfigV3) -> Limits:
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
                check_fields(tool.config, _PackOptions, f"{here}.config")
                options = _PackOptions.model_validate(tool.config)
                settings = PackConfig(
                    autoexec=options.autoexec,
                    network=options.network,
                    http_allowed_hosts=tuple(options.allowedHosts),
                )
                built: AbstractToolset = agent_tools(
                    packs=[tool.toolType],
                    roots=options.roots,
                    base=base,
                    read_only=options.readOnly,
                    settings=settings,
                )
            elif tool.toolType == "file":
                check_fields(tool.config, _FileOptions, f"{here}.config")
                source = _FileOptions.model_validate(tool.config).path
                built = agent_tools([source], roots=["."], base=base)  # YAML command tools work in `base`
            elif tool.toolType == "mcp":
                check_fields(tool.config, _McpOptions, f"{here}.config")
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
