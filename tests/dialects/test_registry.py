from collections.abc import Sequence
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest

import tether.dialects
from tether.dialects import (
    Dialect,
    Opener,
    RegionParser,
    ToolIndex,
    _registry,
    dialect_names,
    get_dialect,
    parse,
    register_dialect,
    render_results,
    render_tools,
    stream_parser,
)
from tether.exceptions import UserError
from tether.types import OkEnvelope, ToolCall, ToolResultMessage, ToolSpec

ISSUE_DIALECTS = {
    "json_calls", "fenced", "yaml", "pythonic", "olmo3_pythonic", "hermes", "mistral", "llama3_json",
    "json_tool_list", "qwen3_coder_xml", "deepseek_v3", "deepseek_v31", "kimi_k2", "glm45", "gemma4", "harmony",
    "xlam", "openai", "anthropic", "gemini", "auto", "reka",
}  # fmt: skip


def test_every_dialect_of_the_issue_is_registered() -> None:
    assert set(dialect_names()) >= ISSUE_DIALECTS


def test_public_names_are_exported_and_sorted() -> None:
    assert tether.dialects.__all__ == sorted(tether.dialects.__all__)
    for name in tether.dialects.__all__:
        assert hasattr(tether.dialects, name)


class _Angle(RegionParser):
    openers = (Opener("<<", ends=(">>",)),)

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        self._emit.call(body.strip(), {}, span)


class _AngleDialect(Dialect):
    name: ClassVar[str] = "test_angle"

    def stream_parser(self, tools: ToolIndex) -> _Angle:
        return _Angle(self.name, tools)

    def render_tools(self, tools: ToolIndex) -> str:
        return "Write <<tool>>."

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(f"<<{c.name}>>" for c in calls)


def test_a_plugin_dialect_registers_like_a_builtin() -> None:
    register_dialect(_AngleDialect(), replace=True)
    assert [c.name for c in parse("a <<ping>> b", "test_angle").calls] == ["ping"]
    with pytest.raises(UserError, match="already registered"):
        register_dialect(_AngleDialect())


def test_an_unknown_dialect_names_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"known dialects: .*hermes"):
        get_dialect("nope")


SPEC = ToolSpec(
    name="get_weather",
    description="Current weather.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
RESULTS: Sequence[ToolResultMessage] = [
    ToolResultMessage(call_id="call_0", name="get_weather", envelope=OkEnvelope(data={"temp": 21}))
]


@pytest.mark.parametrize("name", sorted(n for n in dialect_names() if not n.startswith("test_")))
def test_every_dialect_renders_its_tool_prompt_and_results(name: str) -> None:
    assert "get_weather" in render_tools(name, [SPEC])
    assert "21" in render_results(name, RESULTS)


@pytest.mark.parametrize("wrong", ["nope", 123, None])
def test_an_unknown_dialect_is_a_clear_error(wrong: object) -> None:
    with pytest.raises(UserError, match=r"unknown dialect .*; known dialects: .*hermes"):
        stream_parser(cast("Any", wrong))


_PLUGIN = """
from tether.dialects import Dialect, Opener, RegionParser


class _Braces(RegionParser):
    openers = (Opener("{{", ends=("}}",)),)

    def on_region(self, opener, body, span, complete):
        self._emit.call(body.strip(), {}, span)


class Braces(Dialect):
    name = "test_braces"

    def stream_parser(self, tools):
        return _Braces(self.name, tools)

    def render_tools(self, tools):
        return "Write {{tool}}."

    def render_calls(self, calls):
        return "".join("{{" + c.name + "}}" for c in calls)


NOT_A_DIALECT = 42
"""


def _installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str, *, module: str = "tether_test_braces"
) -> None:
    """A plugin module on the path and an entry point naming `value` in it, as an installed package has."""
    (tmp_path / f"{module}.py").write_text(_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))  # pyright: ignore[reportUnknownMemberType] - untyped in pytest
    point = EntryPoint(name="braces", value=f"{module}:{value}", group="tether.dialects")

    def points(*, group: str) -> list[EntryPoint]:
        return [point] if group == "tether.dialects" else []

    monkeypatch.setattr(_registry, "entry_points", points)
    monkeypatch.setattr(_registry, "_entry_points_loaded", False)
    monkeypatch.setattr(_registry, "_DIALECTS", dict(_registry._DIALECTS))  # pyright: ignore[reportPrivateUsage]


def test_a_dialect_from_an_entry_point_is_found_by_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _installed(monkeypatch, tmp_path, "Braces")
    assert [c.name for c in parse("a {{ping}} b", "test_braces").calls] == ["ping"]
    assert "test_braces" in dialect_names()


def test_an_entry_point_naming_no_dialect_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _installed(monkeypatch, tmp_path, "NOT_A_DIALECT", module="tether_test_braces_bad")
    with pytest.raises(UserError, match="must name a Dialect"):
        dialect_names()


def test_an_entry_point_cannot_take_a_builtin_dialects_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _installed(monkeypatch, tmp_path, "Braces", module="tether_test_braces_clash")
    monkeypatch.setattr(_registry, "_DIALECTS", {**_registry._DIALECTS, "test_braces": get_dialect("hermes")})  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(UserError, match="already taken"):
        dialect_names()


class _Parserless(Dialect):
    name: ClassVar[str] = "test_parserless"

    def render_tools(self, tools: ToolIndex) -> str:
        return ""

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return ""


def test_a_dialect_without_a_parser_names_the_fix() -> None:
    with pytest.raises(UserError, match=r"declares no parser: set `openers = \(Opener\("):
        parse("text", _Parserless())


# Built-in dialects that are not data alone, each with why: a format its openers cannot say, a native one, or a
# fast path that still declares its openers (issue 13: "make a dialect declarative").
NOT_DATA_ALONE = {
    "anthropic": "native: a NativeParser reads the provider's events",
    "gemini": "native",
    "openai": "native",
    "auto": "chooses among the other dialects as the output streams",
    "harmony": "routes text by channel (RegionParser hooks)",
    "llama3_json": "`;`-separated objects (RegionParser hooks)",
    "hermes": "declares its openers; stream_parser is a fast path over them",
    "reka": "hermes's openers and fast path, with its own markers",
}


def test_every_other_built_in_text_dialect_is_declared_as_data() -> None:
    builtin = [n for n in dialect_names() if not n.startswith(("test_", "plugin_"))]
    data = [
        n for n in builtin
        if type(get_dialect(n)).parser is None and type(get_dialect(n)).stream_parser is Dialect.stream_parser
    ]  # fmt: skip
    assert sorted(set(builtin) - set(data)) == sorted(NOT_DATA_ALONE)
    assert all(get_dialect(n).openers for n in data)
    assert len(data) >= 40
