"""The public API: what `tether` exports is sorted, importable, and includes every exception."""

import importlib
import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import tether
import tether.builtin
import tether.exceptions
import tether.execution
import tether.knowledge
import tether.loop
import tether.mcp
import tether.models
import tether.sandbox
import tether.serve
import tether.store
import tether.store.internal
import tether.tools

PACKAGES = [tether, tether.tools, tether.loop, tether.models, tether.mcp, tether.serve, tether.knowledge]


def ruff_order(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then everything else, each sorted."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


@pytest.mark.parametrize("module", PACKAGES, ids=lambda m: m.__name__)
def test_all_is_sorted_and_every_name_resolves(module: ModuleType) -> None:
    names: list[str] = vars(module)["__all__"]
    assert names == sorted(names, key=ruff_order)
    for name in names:
        assert getattr(module, name) is not None


def test_every_exception_is_exported() -> None:
    exceptions = {
        name for name, value in vars(tether.exceptions).items()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == "tether.exceptions"
    }  # fmt: skip
    assert exceptions <= set(tether.__all__)


def test_unknown_attributes_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tether.nope  # noqa: B018 - the access is the test


def test_import_tether_loads_no_heavy_dependency() -> None:
    code = "import sys, tether; print(sorted(m for m in ('pydantic', 'yaml', 'jsonschema', 'typer', 'rich', 'sqlalchemy', 'fastapi', 'uvicorn', 'sse_starlette') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_agent_without_a_store_loads_neither_sqlalchemy_nor_a_provider_sdk() -> None:
    heavy = "('sqlalchemy', 'openai', 'anthropic', 'mcp', 'typer', 'rich')"
    code = (
        f"import sys; from tether import Agent, tool; print(sorted(m for m in {heavy} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_lazy_exports_are_the_real_objects() -> None:
    assert tether.tool is importlib.import_module("tether.tools").tool
    assert tether.ToolCall is importlib.import_module("tether.types").ToolCall


def test_sandbox_unavailable_is_in_the_exception_tree_and_the_sandbox_still_exports_it() -> None:
    assert (
        tether.sandbox.SandboxUnavailable is tether.SandboxUnavailable is tether.exceptions.SandboxUnavailable
    )
    assert issubclass(tether.SandboxUnavailable, tether.TetherRuntimeError)
    assert "SandboxUnavailable" in (tether.exceptions.__doc__ or "")


def cited_names() -> set[str]:
    """Every `tether.x.y` that src/tether cites in backticks (docstrings and comments)."""
    source = Path(tether.__file__).parent
    cited = {
        m for p in source.rglob("*.py") for m in re.findall(r"`(tether(?:\.\w+)+)", p.read_text("utf-8"))
    }
    return cited - {tether.builtin.ENTRY_POINT_GROUP}  # an entry-point group, not a module


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            if not hasattr(value, name):
                return False
            value = getattr(value, name)
        return True
    return False


def test_every_name_a_docstring_cites_exists() -> None:
    # regression: the Executor's docstring pointed users to `tether.store.SessionLog`, which never existed
    assert resolves("tether.execution.SessionLog")
    assert not resolves("tether.store.SessionLog")
    assert sorted(name for name in cited_names() if not resolves(name)) == []


# The 0.1 API of the core's packages, name by name (docs/api.md says who each is for). A change here is a
# change of the public API: deliberate, documented, and in the CHANGELOG.
CORE_API: dict[str, list[str]] = {
    "tether": [
        "AbstractToolset", "Agent", "AnthropicModel", "EndTurn", "Envelope", "ErrorCode", "ErrorEnvelope", "ErrorInfo",
        "Event", "Executor", "FinalResponse", "FunctionModel", "Limits", "Message", "Model", "ModelError",
        "NeedsEnvelope", "NeedsInput", "NoCalls", "OkEnvelope", "OpenAIModel", "ParseResult", "Policy", "Principal",
        "RunResult", "SandboxUnavailable", "ScriptedModel", "Session", "TetherError", "TetherRuntimeError", "Tool",
        "ToolCall", "ToolContext", "ToolCrashed", "ToolError", "ToolSignal", "ToolSpec", "Toolset", "UserError",
        "__version__", "as_toolset", "load_tools", "parse", "stream_parser", "tool",
    ],
    "tether.dialects": [
        "ArgPairs", "Body", "BodyStream", "CallCompleted", "CallDelta", "CallFailed", "CallStarted", "Dialect",
        "Emitter", "JsonCalls", "NativeParser", "Opener", "ParseError", "ParseEvent", "ParseResult", "PartialCall",
        "PythonCalls", "ReasoningDelta", "RegionParser", "StreamParser", "TextDelta", "ToolIndex", "XmlFunctions",
        "XmlInvoke", "dialect_names", "get_dialect", "parse", "register_dialect", "render_results", "render_tools",
        "result_text", "result_value", "stream_parser",
    ],
    "tether.schemas": ["SCHEMAS", "export_schemas", "schema_for"],
    "tether.envelopes": [
        "DEFAULT_SUGGESTIONS", "error", "from_json", "from_signal", "in_doubt", "internal", "needs", "ok", "stopped",
        "stopped_suggestion", "timed_out",
    ],
    "tether.execution": [
        "Allow", "Attempt", "CallReport", "Decision", "Executor", "Guard", "Policy", "Principal", "Recorder",
        "Refuse", "RepairedCallPolicy", "Replay", "Run", "SessionLog", "idempotency_key", "refusal",
    ],
    "tether.store": [
        "DEFAULT_URL", "EntryKind", "Journal", "JournalEntry", "JournalStats", "Lookup", "MemoryJournal",
        "MemoryRateLimits", "Outcome", "RateLimits", "SessionStore", "SqlJournal", "SqlRateLimits", "TokenBucket",
        "ToolStats", "WouldWait", "compute_stats",
    ],
    "tether.tools": [
        "REDACTED", "AbstractToolset", "ArgumentValidator", "CombinedToolset", "ContextSource", "ExportFormat",
        "FilteredToolset", "PrefixedToolset", "Problem", "SecretText", "Tool", "ToolContext", "ToolsLike", "Toolset",
        "ValidatedCall", "as_toolset", "describe_problems", "dump_yaml", "export_tools", "from_anthropic",
        "from_bfcl", "from_gemini", "from_mcp", "from_openai", "load_tools", "model_schema", "redact",
        "spec_from_dict", "specs_from_json", "specs_from_typescript", "specs_from_yaml", "to_anthropic",
        "to_gemini", "to_openai", "tool",
    ],
    "tether.sandbox": [
        "WORKSPACE", "CgroupSupport", "HostCheck", "Sandbox", "SandboxLimits", "SandboxProcess", "SandboxResult",
        "SandboxUnavailable", "cgroup_support", "check_host", "result_data", "run_for_tool", "tails",
    ],
    "tether.loop": [
        "Agent", "Continue", "End", "EndTurn", "FinalResponse", "Judge", "Limits", "Mode", "ModeChooser",
        "NoCalls", "RunResult", "Session", "Termination", "TurnResult", "Verdict", "actionable_intent",
        "core_tools", "unanswered_calls",
    ],
    "tether.models": [
        "AnthropicModel", "Finish", "FunctionModel", "Model", "ModelChunk", "ModelRequest", "OpenAIModel",
        "ReasoningChunk", "RecordingModel", "ScriptedModel", "TextChunk", "ToolCallChunk", "ToolCallDone", "Usage",
        "load_cassette", "model_from_name",
    ],
    "tether.builtin": [
        "ENTRY_POINT_GROUP", "FsLimits", "Located", "PackConfig", "Roots", "ToolPack", "agent_tools", "build_tools",
        "exec_pack", "fs_pack", "get_pack", "memory_pack", "packs", "register_pack", "search_pack", "web_pack",
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CORE_API))
def test_the_core_packages_export_exactly_their_documented_api(name: str) -> None:
    module = importlib.import_module(name)
    assert vars(module)["__all__"] == CORE_API[name]
    documented = (Path(__file__).parents[1] / "docs" / "api.md").read_text("utf-8")
    assert f"`{name}`" in documented
    assert [n for n in CORE_API[name] if f"`{n}`" not in documented and f"{n}," not in documented] == []


def test_no_package_exports_what_only_its_own_machinery_uses() -> None:
    # dropped from the 0.1 API: the guards' classes (the executor builds them), schema helpers, seccomp
    assert not hasattr(tether.tools, "normalize_schema")
    assert not hasattr(tether.tools, "provider_alias")
    assert not hasattr(tether.sandbox, "sandbox_filter")
    assert not hasattr(tether.execution, "kalygo_record")
    assert importlib.util.find_spec("tether.execution.guards") is None
    # the store's helpers for the executor and the CLI live in tether.store.internal, documented as not API
    for name in ("replays", "resolution", "storable", "storable_text", "writer_alive"):
        assert not hasattr(tether.store, name)
        assert hasattr(tether.store.internal, name)


PUBLIC_MODULES = [
    "tether", "tether.types", "tether.exceptions", "tether.envelopes", "tether.schemas", "tether.tools",
    "tether.dialects", "tether.models", "tether.loop", "tether.execution", "tether.store", "tether.sandbox",
    "tether.builtin", "tether.mcp", "tether.serve", "tether.knowledge",
]  # fmt: skip


def test_one_public_name_is_one_thing_in_every_package() -> None:
    # regression: `Limits` was the agent's and the sandbox's, `result_data` the dialects' (an envelope as JSON)
    # and the sandbox's (a finished run as a tool result): an import of the wrong one type-checked
    meanings: dict[str, dict[int, list[str]]] = {}
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for export in vars(module).get("__all__", ()):
            meanings.setdefault(export, {}).setdefault(id(getattr(module, export)), []).append(name)
    assert {
        export: sorted(m for ms in found.values() for m in ms)
        for export, found in meanings.items()
        if len(found) > 1
    } == {}
