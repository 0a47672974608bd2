"""`ServeConfig`: the agents a server offers and how it guards them, from Python or from a config file.

A config file (YAML or JSON) names several agents, each an `agent_config.v3` object (seed 004's
`agent_config.v2` plus `mode`, `baseUrl`, `responder` and `policy`; a v2 object is a valid v3 one), plus the
server's database, API keys and limits. A field that is not known is refused with the one probably meant:

    agents:
      - name: helper
        model: openai:gpt-4o-mini
        dialect: hermes                # leave out for the model's native tool calling
        tools:
          - {toolType: fs, toolName: files, config: {roots: ["."], readOnly: true}}
          - {toolType: file, toolName: weather, config: {path: tools/weather.py}}
        limits: {maxIterations: 8}
        mode: talk_first               # agent_config.v3: mode, baseUrl, responder, policy
    database: sqlite:///tether-serve.db  # default: tether-serve.db next to the config file
    keys:
      - {hash: "sha256:<hex of the key>", principal: alice, scopes: [fs.write]}
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Any, Union, cast, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.exceptions import UserError
from tether.execution import Principal
from tether.loop import Agent
from tether.serve._openai_upstream import Upstream
from tether.store import Journal
from tether.types import RateLimit

__all__ = [
    "AgentBuilder",
    "ApiKey",
    "ServeConfig",
    "ServedAgent",
    "check_fields",
    "default_database",
    "hash_key",
    "load_config",
    "problems",
]

AgentBuilder = Callable[[Principal, Journal], Agent]
"""Makes the agent for one run: on behalf of `principal`, keeping its calls in the server's journal."""


@dataclass(frozen=True)
class ServedAgent:
    """An agent the server offers by name; `build` makes it for each run (its model and tools may be shared)."""

    name: str
    build: AgentBuilder
    description: str = ""
    connections: tuple[AbstractAsyncContextManager[Any], ...] = ()
    """What the app opens at start and closes at shutdown (the agent's MCP servers, on the app's loop)."""


@dataclass(frozen=True)
class ApiKey:
    """An API key, stored only as its hash, and the principal (with scopes) it stands for."""

    hash: str
    """`sha256:<hex>` of the key (see `hash_key`)."""
    principal: str
    scopes: frozenset[str] = frozenset()


def hash_key(key: str) -> str:
    """What a config stores for `key`: `sha256:<hex>`. Keys are long random strings, so a fast hash is enough."""
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def default_database(config_file: Path | None) -> str:
    """SQLite next to the config file, or in the user's data directory when there is none."""
    if config_file is not None:
        return f"sqlite:///{config_file.resolve().parent / 'tether-serve.db'}"
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "tether"
    return f"sqlite:///{data / 'serve.db'}"


@dataclass(frozen=True)
class ServeConfig:
    """What `create_app` serves.

    Args:
        agents: The agents, by their names (the first is the default).
        database: Where sessions, the journal and rate limits live: `sqlite:///file.db` or a PostgreSQL URL,
            which several workers may share.
        keys: Accepted API keys. None configured: every request is the local principal, and `tether serve`
            binds only a loopback address.
        cors_origins: Browser origins allowed to call the API from other sites (none by default).
        max_request_bytes: Larger request bodies are refused with 413.
        rate_limit: Requests each key may make, per window; 429 beyond it (the local user of a server
            without keys is not limited).
        disconnect_grace_s: How long a run nobody follows keeps going before it is cancelled, so that a
            client that reconnects in time loses nothing.
        local_scopes: Scopes of the local principal, who every request is when no keys are configured.
        upstreams: Model names the OpenAI-compatible endpoint (`/v1`) passes on to an OpenAI-compatible server,
            teaching the client's tools in the model's dialect (see docs/openai.md).
    """

    agents: Sequence[ServedAgent]
    database: str = field(default_factory=lambda: default_database(None))
    keys: Sequence[ApiKey] = ()
    cors_origins: Sequence[str] = ()
    max_request_bytes: int = 1_000_000
    rate_limit: RateLimit | None = field(default_factory=lambda: RateLimit(calls=120, per_seconds=60))
    disconnect_grace_s: float = 10.0
    local_scopes: Sequence[str] = ()
    upstreams: Mapping[str, Upstream] = field(default_factory=dict[str, Upstream])

    def __post_init__(self) -> None:
        if not self.agents:
            raise UserError("ServeConfig(agents=...) is empty: serve at least one agent.")
        names = [a.name for a in self.agents]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise UserError(f"ServeConfig: agent names must be unique; repeated: {', '.join(twice)}.")


class _Key(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hash: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    principal: str = Field(min_length=1)
    scopes: list[str] = Field(default_factory=list[str])


class _Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    maxRequestBytes: int = Field(default=1_000_000, gt=0)
    requestsPerMinute: int | None = Field(default=120, gt=0)
    disconnectGraceS: float = Field(default=10.0, ge=0)


class _Upstream(BaseModel):
    model_config = ConfigDict(extra="forbid")

    baseUrl: str = Field(min_length=1)
    model: str = Field(min_length=1)
    dialect: str = "hermes"
    apiKeyEnv: str | None = None
    timeoutS: float = Field(default=60.0, gt=0)
    reasoningOpen: bool = False

    def upstream(self, where: str) -> Upstream:
        from tether.dialects import dialect_names

        if self.dialect not in dialect_names():
            raise UserError(
                f"{where}.dialect: no dialect {self.dialect!r}; one of {', '.join(dialect_names())}"
            )
        return Upstream(
            base_url=self.baseUrl,
            model=self.model,
            dialect=self.dialect,
            api_key_env=self.apiKeyEnv,
            timeout=self.timeoutS,
            reasoning_open=self.reasoningOpen,
        )


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agents: list[dict[str, Any]] = Field(min_length=1)
    database: str | None = None
    keys: list[_Key] = Field(default_factory=list[_Key])
    cors: list[str] = Field(default_factory=list[str])
    localScopes: list[str] = Field(default_factory=list[str])
    limits: _Limits = Field(default_factory=_Limits)
    upstreams: dict[str, _Upstream] = Field(default_factory=dict[str, _Upstream])


def load_config(path: str | Path, *, database: str | None = None) -> ServeConfig:
    """The config file at `path` (YAML or JSON), every agent checked against `agent_config.v3`.

    Raises:
        UserError: the file is missing or unreadable, or a field is wrong (named with its path).
    """
    from tether.serve._agents import served_agent  # models and tools load only when a config is read

    path = Path(path)
    raw = _read(path)
    check_fields(raw, _File, f"{path}:")
    try:
        spec = _File.model_validate(raw)
    except ValidationError as error:
        raise UserError(problems(error, f"{path}: ")) from None
    base = path.resolve().parent
    agents = [served_agent(entry, f"{path}: agents[{i}]", base) for i, entry in enumerate(spec.agents)]
    try:
        return ServeConfig(
            agents=agents,
            database=database or spec.database or default_database(path),
            keys=[ApiKey(k.hash, k.principal, frozenset(k.scopes)) for k in spec.keys],
            cors_origins=spec.cors,
            max_request_bytes=spec.limits.maxRequestBytes,
            rate_limit=None
            if spec.limits.requestsPerMinute is None
            else RateLimit(calls=spec.limits.requestsPerMinute, per_seconds=60),
            disconnect_grace_s=spec.limits.disconnectGraceS,
            local_scopes=spec.localScopes,
            upstreams={n: u.upstream(f"upstreams.{n}") for n, u in spec.upstreams.items()},
        )
    except UserError as error:
        raise UserError(f"{path}: {error}") from None


def _read(path: Path) -> Mapping[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UserError(f"Cannot read the serve config {path}: {error.strerror or error}.") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise UserError(
            f"{path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {error}"
        ) from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: the config must be a mapping with an `agents:` list (see docs/serve.md).")
    return data  # pyright: ignore[reportUnknownVariableType] - checked by the model next


def check_fields(data: Any, model: type[BaseModel], where: str) -> None:
    """Refuse a field `model` (or a model nested in it) does not have, naming its path and the field meant:
    a typo must not be ignored (`maxIteration: 6` would leave the limit at its default).

    Raises:
        UserError: `where.path.to.field: unknown field 'x'; did you mean 'y'?` for each unknown field.
    """
    found: list[str] = []
    _walk(data, model, where, found)
    if found:
        raise UserError("; ".join(found))


def _walk(data: Any, annotation: Any, path: str, found: list[str]) -> None:
    if isinstance(data, dict):
        data = cast("dict[Any, Any]", data)
        if (model := _model_in(annotation)) is not None:
            fields = model.model_fields
            for key, value in data.items():
                if key in fields:
                    _walk(value, fields[key].annotation, _join(path, key), found)
                else:
                    close = difflib.get_close_matches(str(key), list(fields), n=1, cutoff=0.6)
                    hint = f"did you mean {close[0]!r}?" if close else f"the fields are {', '.join(fields)}."
                    found.append(f"{_join(path, key)}: unknown field {key!r}; {hint}")
        elif (values := _args_of(annotation, dict)) is not None:
            for key, value in data.items():
                _walk(value, values[1], _join(path, key), found)
    elif isinstance(data, list) and (items := _args_of(annotation, list)) is not None:
        for i, value in enumerate(cast("list[Any]", data)):
            _walk(value, items[0], f"{path}[{i}]", found)


def _join(path: str, key: Any) -> str:
    return f"{path} {key}" if path.endswith(":") else f"{path}.{key}"


def _options(annotation: Any) -> tuple[Any, ...]:
    """The members of a union (`X | None`), or the annotation alone."""
    return get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    for option in _options(annotation):
        if isinstance(option, type) and issubclass(option, BaseModel):
            return None if option.model_config.get("extra") == "allow" else option
    return None


def _args_of(annotation: Any, container: type) -> tuple[Any, ...] | None:
    for option in _options(annotation):
        if get_origin(option) is container and get_args(option):
            return get_args(option)
    return None


def problems(error: ValidationError, prefix: str = "") -> str:
    """Each problem as `field.path: message`, joined."""
    return "; ".join(
        f"{prefix}{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in error.errors()
    )
