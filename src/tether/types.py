"""The vocabulary every part of tether speaks: tool specs, tool calls, results, messages and events.

A leaf module: it imports nothing of tether's. Every model here round-trips through JSON, and the versioned
JSON Schemas that `tether schema export` writes are generated from these models only.

Wire forms follow the seed designs exactly where they define one: the result envelope is
`{ok: true, data}` | `{ok: false, needs}` | `{ok: false, error: {code, message, recoverable, suggestion}}`,
events carry seed 004's `event` names, and Meowstik's `{"toolCalls": [...]}` and Kalygo's
`{toolType, toolName, input, output}` records are models of their own.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

__all__ = [
    "AgentConfig",
    "AgentConfigV3",
    "AgentLimitsConfig",
    "AgentModelConfig",
    "AgentToolConfig",
    "AnyEnvelope",
    "AssistantMessage",
    "ChainEndEvent",
    "ChainStartEvent",
    "ChatEvent",
    "ChatMessageV2",
    "ChatModelStartEvent",
    "ChatModelStreamEvent",
    "Envelope",
    "ErrorCode",
    "ErrorEnvelope",
    "ErrorEvent",
    "ErrorInfo",
    "Event",
    "JsonSchema",
    "MeowstikToolCall",
    "MeowstikToolCalls",
    "Message",
    "NeedsEnvelope",
    "NeedsEvent",
    "OkEnvelope",
    "OpenUrlEvent",
    "Provenance",
    "QAMetadata",
    "RateLimit",
    "Repair",
    "SandboxPolicy",
    "SideEffects",
    "SpeechEvent",
    "SystemMessage",
    "TextDocumentMetadata",
    "ToolCall",
    "ToolCallRecord",
    "ToolEndEvent",
    "ToolExample",
    "ToolResultMessage",
    "ToolSpec",
    "ToolStartEvent",
    "UserMessage",
    "VectorSearchOutput",
    "VectorSearchResult",
]

JsonSchema = dict[str, Any]
"""A JSON Schema document, as parsed JSON."""

SideEffects = Literal["none", "idempotent", "mutating"]
"""What running a tool does to the world: nothing, the same thing however often, or something new each time."""

TOOL_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.:\-]{0,127}$"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


# --------------------------------------------------------------------------------------------- tool specs


class SandboxPolicy(_Frozen):
    """What a tool may touch while it runs (seed 001 §2)."""

    network: bool = False
    """Whether the tool needs the network."""
    filesystem: tuple[str, ...] = ()
    """Path patterns the tool may use, e.g. `("workspace/**",)`."""
    timeout_ms: int | None = Field(default=None, gt=0)
    """The longest the tool may run; `None` leaves it to the executor's default."""
    isolation: Literal["none", "process"] = "none"
    """`process` runs the tool in a child process that a timeout can kill, even if it never yields."""


class ToolExample(_Frozen):
    """One example call of a tool, shown to models in tool prompts (seeds 001 and 003)."""

    input: dict[str, Any]
    output: Any = None
    why: str | None = None


class RateLimit(_Frozen):
    """A token bucket: at most `calls` calls in any window of `per_seconds` seconds, per principal."""

    calls: int = Field(gt=0)
    per_seconds: float = Field(gt=0)


class ToolSpec(_Frozen):
    """Everything tether knows about a tool, whichever source defined it."""

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    """Unique within a toolset; dotted names such as `fs.read` are allowed."""
    description: str = ""
    category: str | None = None
    """A grouping such as `fs`, `search`, `exec`, `memory` (seed 001)."""
    input_schema: JsonSchema = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the tool's own arguments (without `why`, which tether adds when `requires_why`)."""
    output_schema: JsonSchema | None = None
    sandbox: SandboxPolicy = SandboxPolicy()
    examples: tuple[ToolExample, ...] = ()
    scopes: tuple[str, ...] = ()
    """Scopes a principal must hold to call the tool (seed 002)."""
    side_effects: SideEffects = "mutating"
    """Assumed `mutating` unless declared: the safe default for retries and streaming execution."""
    requires_why: bool = False
    """Whether a call must carry a `why` stating its intent (seed 001 §4)."""
    priority: int = 0
    """Default priority of calls to this tool; higher runs first (seed 000)."""
    rate_limit: RateLimit | None = None
    sequential: bool = False
    """A barrier: calls to this tool never run concurrently with other calls."""
    idempotency_fields: tuple[str, ...] = ()
    """Argument names whose values identify a repeated request; empty means the call id does."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Source-specific facts that tether carries but does not interpret."""


# ------------------------------------------------------------------------------------------------- calls


class Repair(_Frozen):
    """One change tether made to what the model wrote, so that policy can judge the call."""

    kind: str
    """e.g. `trailing_comma`, `unbalanced_brackets`, `single_quotes`, `coerced`."""
    message: str
    path: str | None = None
    """The argument it concerns, as a JSON path such as `$.days`, where it concerns one."""


class Provenance(_Frozen):
    """Where a call came from in the model's output."""

    dialect: str
    span: tuple[int, int] | None = None
    """Character offsets `[start, end)` of the call in the model's output."""
    repairs: tuple[Repair, ...] = ()


class ToolCall(_Frozen):
    """A request by the model to run one tool."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    why: str | None = None
    priority: int | None = None
    """Overrides the tool's default priority when the model gave one."""
    annotations: tuple[str, ...] = ()
    """Comments the model attached to the call (YAML comments are semantic, seed 001 §4)."""
    provenance: Provenance | None = None

    @property
    def repairs(self) -> tuple[Repair, ...]:
        return self.provenance.repairs if self.provenance else ()

    @property
    def repaired(self) -> bool:
        """Whether tether had to change what the model wrote to make this call."""
        return bool(self.repairs)


# ------------------------------------------------------------------------------------------------ results


class ErrorCode(StrEnum):
    """Error codes tether itself produces; tools and guards may use codes of their own too."""

    NOT_FOUND = "NOT_FOUND"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    TIMEOUT = "TIMEOUT"
    INVALID_ARGS = "INVALID_ARGS"
    MISSING_WHY = "MISSING_WHY"
    QUOTA_EXCEEDED = "QUOTA_EXCEEDED"
    UNAUTHORIZED = "UNAUTHORIZED"
    SCOPES_MISSING = "SCOPES_MISSING"
    CONNECTION_INACTIVE = "CONNECTION_INACTIVE"
    RATE_LIMITED = "RATE_LIMITED"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    CONFLICT = "CONFLICT"
    INTERNAL = "INTERNAL"


class ErrorInfo(_Frozen):
    code: str
    message: str
    recoverable: bool
    suggestion: str | None = None
    details: dict[str, Any] | None = None
    """Machine-readable specifics, e.g. `{"problems": [...]}` or `{"retry_after_s": 2.5}`."""


class OkEnvelope(_Frozen):
    ok: Literal[True] = True
    data: Any = None


class NeedsEnvelope(_Frozen):
    """Information the model should ask the user for before calling again (seed 002)."""

    ok: Literal[False] = False
    needs: dict[str, bool | str]
    """Missing field -> `True`, or the question to ask."""


class ErrorEnvelope(_Frozen):
    ok: Literal[False] = False
    error: ErrorInfo


def _envelope_tag(value: Any) -> str | None:
    fields: dict[str, Any] = value if isinstance(value, dict) else getattr(value, "__dict__", {})  # pyright: ignore[reportUnknownVariableType]
    if fields.get("ok") is True:
        return "ok"
    if fields.get("needs") is not None:
        return "needs"
    if fields.get("error") is not None:
        return "error"
    return None


Envelope = Annotated[
    Annotated[OkEnvelope, Tag("ok")]
    | Annotated[NeedsEnvelope, Tag("needs")]
    | Annotated[ErrorEnvelope, Tag("error")],
    Discriminator(_envelope_tag),
]
"""The one result of every tool call."""

AnyEnvelope = OkEnvelope | NeedsEnvelope | ErrorEnvelope
"""`Envelope` as a plain union, for annotations and `isinstance` (`Envelope` is the validating form)."""


# ----------------------------------------------------------------------------------------------- messages


class SystemMessage(_Frozen):
    kind: Literal["system"] = "system"
    content: str


class UserMessage(_Frozen):
    kind: Literal["user"] = "user"
    content: str


class AssistantMessage(_Frozen):
    kind: Literal["assistant"] = "assistant"
    content: str = ""
    """The text a user would see (outside tool calls)."""
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    raw: str | None = None
    """The model's output verbatim, for text dialects that must be replayed to the model as written."""


class ToolResultMessage(_Frozen):
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    envelope: Envelope


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage, Field(discriminator="kind")
]
"""One entry of a conversation."""


# ------------------------------------------------------------------------------------- seed record formats


class ToolCallRecord(BaseModel):
    """Kalygo's typed record of a completed tool call (seed 004)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    toolType: str
    toolName: str
    input: dict[str, Any]
    output: Any = None


class ChatMessageV2(BaseModel):
    """A chat message as Kalygo's frontends render it: the text and the typed records of the tool calls made
    for it (seed 004's `chat_message.v2`)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    role: Literal["user", "assistant", "system"]
    content: str
    toolCalls: list[ToolCallRecord] = Field(default_factory=list[ToolCallRecord])
    """The calls made while the message was written, in the order they ran (assistant messages)."""


class AgentToolConfig(BaseModel):
    """One tool an agent offers: its type (what implements it), its instance name and its settings."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    toolType: str
    """What implements the tool, e.g. `vectorSearch`, or a tether pack such as `fs`."""
    toolName: str = Field(pattern=TOOL_NAME_PATTERN)
    """The instance name the model calls, e.g. `search_docs`."""
    description: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    """The tool type's own settings, e.g. `{"namespace": "docs", "topK": 5}`."""


class AgentLimitsConfig(BaseModel):
    """The run's limits (see `tether.loop.Limits`); a missing one keeps its default."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    maxIterations: int | None = Field(default=None, gt=0)
    maxToolCalls: int | None = Field(default=None, gt=0)
    maxTokens: int | None = Field(default=None, gt=0)
    maxWallTimeS: float | None = Field(default=None, gt=0)
    retryBudget: int | None = Field(default=None, ge=0)


class AgentConfig(BaseModel):
    """An agent's configuration (seed 004's `agent_config.v2`): model, instructions, tools and limits."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str
    description: str | None = None
    model: str
    """`provider:name`, e.g. `openai:gpt-4o-mini`."""
    systemPrompt: str = ""
    dialect: str | None = None
    """A text dialect; None uses the model's native tool calling."""
    termination: Literal["no_calls", "end_turn", "final_response"] = "no_calls"
    tools: list[AgentToolConfig] = Field(default_factory=list[AgentToolConfig])
    limits: AgentLimitsConfig = Field(default_factory=AgentLimitsConfig)


class AgentModelConfig(BaseModel):
    """A model and, optionally, the server it runs on (`agent_config.v3`'s `responder` in its long form)."""

    model_config = ConfigDict(frozen=True, defer_build=True, extra="forbid")

    model: str
    """`provider:name`, e.g. `openai:gpt-4o`."""
    baseUrl: str | None = None
    """The provider's server, e.g. an OpenAI-compatible one (Ollama, vLLM, llama.cpp)."""


class AgentConfigV3(AgentConfig):
    """An agent's configuration, `agent_config.v3`: `agent_config.v2` (seed 004) plus how the agent acts and
    where its models run. Every `agent_config.v2` object is a valid v3 one."""

    mode: Literal["talk_first", "act_first", "actionable_intent"] = "talk_first"
    """Whether the agent may call tools before it answers (`act_first`), only after talking it through
    (`talk_first`), or chooses per message (`actionable_intent`: acts on requests to do something)."""
    baseUrl: str | None = None
    """The server `model` runs on, e.g. an OpenAI-compatible one (Ollama, vLLM, llama.cpp)."""
    responder: str | AgentModelConfig | None = None
    """A second model that writes the user-facing reply once the tools are done (planner -> executor ->
    responder); `model` is then the planner. A name (`openai:gpt-4o`) or `{model, baseUrl}`."""
    policy: dict[str, Any] = Field(default_factory=dict[str, Any])
    """The executor's policy (`tether.execution.Policy` fields), e.g. `{require_principal: true,
    max_concurrency: 4, default_timeout_s: 30}`."""


class MeowstikToolCall(BaseModel):
    """One call in Meowstik's output format (seed 000)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    type: str
    id: str
    operation: str
    parameters: dict[str, Any]
    priority: float = 0


class MeowstikToolCalls(BaseModel):
    """Meowstik's whole model output: `{"toolCalls": [...]}` (seed 000)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    toolCalls: list[MeowstikToolCall]


class TextDocumentMetadata(BaseModel):
    """A chunk of an ingested `.txt`/`.md` document (seed 004); YAML front matter adds `file_<key>` fields."""

    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    filename: str
    """The original file name."""
    chunkId: int = Field(ge=1)
    """The chunk's identifier within its file (1-based)."""
    content: str
    chunkSizeTokens: int = Field(ge=0)
    """The chunk's length in tokens (of the tokenizer that chunked it)."""
    uploadTimestamp: str
    """When the file was ingested: Unix time in milliseconds, as a string."""
    chunkNumber: int = Field(ge=1)
    """The chunk's number for display (1-based)."""
    totalChunks: int = Field(ge=1)


class QAMetadata(BaseModel):
    """One question and answer from an ingested CSV file (seed 004)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    row_number: int = Field(ge=1)
    """The row's number among the CSV's data rows (1-based)."""
    q: str
    a: str
    content: str
    """`Q: {q}\nA: {a}`."""
    filename: str
    user_id: str
    user_email: str
    upload_timestamp: str
    """When the file was ingested: Unix time in milliseconds, as a string."""
    created_at: str | None = None
    last_edited_at: str | None = None


class VectorSearchResult(BaseModel):
    """One hit of a `vectorSearch` / `vectorSearchWithReranking` tool (seed 004)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    score: float
    """The retrieval score, higher is better, by search mode: cosine similarity (vector), BM25 (lexical), or
    hybrid's fused score (by default a weighted sum of min-max normalised scores, 0 to 1)."""
    rerankScore: float | None = None
    """The cross-encoder's score, which orders the results, when they were reranked."""
    metadata: QAMetadata | TextDocumentMetadata


class VectorSearchOutput(BaseModel):
    """The `output` of a `vectorSearch` / `vectorSearchWithReranking` tool-call record (seed 004)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    results: list[VectorSearchResult]
    namespace: str
    index: str


# ------------------------------------------------------------------------------------------------- events


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    run_id: str | None = None


class ChainStartEvent(_Event):
    event: Literal["on_chain_start"] = "on_chain_start"


class ChatModelStartEvent(_Event):
    event: Literal["on_chat_model_start"] = "on_chat_model_start"
    toolCalls: list[ToolCallRecord] = Field(default_factory=list[ToolCallRecord])
    """The calls accumulated so far in this run."""


class ChatModelStreamEvent(_Event):
    event: Literal["on_chat_model_stream"] = "on_chat_model_stream"
    data: str
    """A token (text delta) from the model."""


class ToolStartEvent(_Event):
    event: Literal["on_tool_start"] = "on_tool_start"
    data: str
    """A one-line description, e.g. `Starting tool: search_docs with inputs: {...}`."""
    call: ToolCall


class ToolEndEvent(_Event):
    event: Literal["on_tool_end"] = "on_tool_end"
    call_id: str
    envelope: Envelope


class ChainEndEvent(_Event):
    event: Literal["on_chain_end"] = "on_chain_end"
    data: Any = None
    """The final response."""
    toolCalls: list[ToolCallRecord] = Field(default_factory=list[ToolCallRecord])
    reason: str | None = None
    """Why the run ended, e.g. `end_turn`, `final_response`, `no_calls`, `max_iterations`."""


class ErrorEvent(_Event):
    event: Literal["error"] = "error"
    data: dict[str, str]
    """`{"error": <code>, "message": <text>}` (seed 004)."""


class ChatEvent(_Event):
    """Text for the user's chat window (`send_chat`, seed 000)."""

    event: Literal["chat"] = "chat"
    data: str


class SpeechEvent(_Event):
    """An utterance to speak (`say`, seed 000)."""

    event: Literal["speech"] = "speech"
    utterance: str
    voice_id: str | None = None
    style: str | None = None
    audio: str | None = None
    """Path of the synthesized speech (a WAV file in the temp directory) when a speech engine is installed;
    whoever plays it owns it and may delete it."""


class OpenUrlEvent(_Event):
    event: Literal["open_url"] = "open_url"
    url: str


class NeedsEvent(_Event):
    """A tool needs information only the user can give (seed 002)."""

    event: Literal["needs"] = "needs"
    call_id: str
    needs: dict[str, bool | str]


Event = Annotated[
    ChainStartEvent
    | ChatModelStartEvent
    | ChatModelStreamEvent
    | ToolStartEvent
    | ToolEndEvent
    | ChainEndEvent
    | ErrorEvent
    | ChatEvent
    | SpeechEvent
    | OpenUrlEvent
    | NeedsEvent,
    Field(discriminator="event"),
]
"""One item of an agent run's event stream (seed 004's agent_streaming_events names, plus tether's own)."""
