"""A third-party package's dialects, written with public names only and installed through the `tether.dialects`
entry-point group: one declared as data with a shared body format, one with a body format of its own, and a
native one that reads its provider's JSON."""

from importlib.metadata import EntryPoint
from pathlib import Path
from typing import ClassVar

import pytest

from tether.dialects import (
    Dialect,
    Opener,
    TextDelta,
    _registry,
    dialect_names,
    get_dialect,
    parse,
    stream_parser,
)
from tether.exceptions import UserError
from tether.models import TextChunk, ToolCallDone
from tether.types import ToolSpec

from .conftest import StreamCheck

_PLUGIN = '''
from dataclasses import dataclass

from tether.dialects import Body, Dialect, Emitter, JsonCalls, NativeParser, Opener, XmlFunctions
from tether.models import TextChunk, ToolCallDone


class Tagged(Dialect):
    """<call>{"name": ..., "arguments": ...}</call>, and Qwen3-Coder XML in <xcall>: data only."""

    name = "plugin_tagged"
    openers = (
        Opener("<call>", ends=("</call>",), body=JsonCalls(announce=True)),
        Opener("<xcall>", ends=("</xcall>",), body=XmlFunctions()),
        Opener("<think>", "reasoning", ends=("</think>",)),
    )

    def render_tools(self, tools):
        return "Write <call>{json}</call>."

    def render_calls(self, calls):
        import json
        return "".join(
            "<call>" + json.dumps({"name": c.name, "arguments": c.arguments}) + "</call>" for c in calls
        )


@dataclass(frozen=True)
class KeyValues:
    """`name k=v k=v`: a body format of the plugin's own."""

    def read(self, out: Emitter, text: str, span, complete: bool) -> None:
        name, *pairs = text.split()
        if not name.isidentifier():
            out.fail("a call starts with its name", span, text)
            return
        args = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep:
                out.fail(f"{pair!r} is not key=value", span, text)
                return
            args[key] = int(value) if value.isdigit() else value
        out.call(name, args, span)


class Lines(Dialect):
    name = "plugin_lines"
    openers = (Opener("!call ", ends=("\\n",), body=KeyValues(), line_start=True),)

    def render_tools(self, tools):
        return "Write a line: !call name key=value ..."

    def render_calls(self, calls):
        return "".join(
            "!call " + " ".join([c.name, *(f"{k}={v}" for k, v in c.arguments.items())]) + "\\n" for c in calls
        )


class _Wire(NativeParser):
    @staticmethod
    def read(event):
        if "say" in event:
            return [TextChunk(str(event["say"]))]
        if "do" in event:
            return [ToolCallDone("part", event.get("id"), event["do"], dict(event.get("with", {})))]
        return []


class Wire(Dialect):
    """A provider that streams `{"say": text}` and `{"do": name, "with": {...}}` objects."""

    name = "plugin_wire"
    parser = _Wire

    def render_tools(self, tools):
        return "[]"

    def render_calls(self, calls):
        import json
        return "\\n".join(json.dumps({"do": c.name, "with": c.arguments, "id": c.id}) for c in calls)

'''


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The plugin installed: its module on the path, its three dialects as entry points."""
    (tmp_path / "tether_test_plugin.py").write_text(_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))  # pyright: ignore[reportUnknownMemberType] - untyped in pytest
    points = [
        EntryPoint(name=n, value=f"tether_test_plugin:{n}", group="tether.dialects")
        for n in ("Tagged", "Lines", "Wire")
    ]

    def found(*, group: str) -> list[EntryPoint]:
        return points if group == "tether.dialects" else []

    monkeypatch.setattr(_registry, "entry_points", found)
    monkeypatch.setattr(_registry, "_entry_points_loaded", False)
    monkeypatch.setattr(_registry, "_DIALECTS", dict(_registry._DIALECTS))  # pyright: ignore[reportPrivateUsage]


TAGGED = (
    '<think>maybe <call>{"name": "no"}</call></think>Sure. <call>{"name": "get_weather", "arguments": '
    '{"city": "Paris"}}</call> and <xcall><function=f>\n<parameter=n>\n3\n</parameter>\n</function></xcall> done'
)


@pytest.mark.usefixtures("plugin")
def test_a_data_only_plugin_dialect_reads_its_calls_at_every_split(check_stream: StreamCheck) -> None:
    result = check_stream(TAGGED, "plugin_tagged")
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "Paris"}),
        ("f", {"n": 3}),
    ]
    assert result.reasoning == 'maybe <call>{"name": "no"}</call>'  # a call inside reasoning is no call
    assert result.content == "Sure.  and  done"
    assert {"plugin_tagged", "plugin_lines", "plugin_wire"} <= set(dialect_names())


@pytest.mark.usefixtures("plugin")
def test_a_plugin_body_that_streams_announces_the_call_before_it_ends() -> None:
    p = stream_parser("plugin_tagged")
    events = p.feed('<call>{"name": "get_weather", "arguments": {"city": "Pa')
    assert [type(e).__name__ for e in events][:1] == ["CallStarted"]
    assert [c.name for c in p.partial_calls()] == ["get_weather"]


@pytest.mark.usefixtures("plugin")
def test_a_plugin_body_format_of_its_own(check_stream: StreamCheck) -> None:
    tools = [ToolSpec(name="add", description="", input_schema={"type": "object"})]
    result = check_stream("Adding.\n!call add a=1 b=2\n!call 9x\n!call add c\nbye", "plugin_lines", tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("add", {"a": 1, "b": 2})]
    assert [e.message for e in result.errors] == ["a call starts with its name", "'c' is not key=value"]
    assert result.content == "Adding.\nbye"
    dialect = get_dialect("plugin_lines")
    calls = result.calls
    assert [c.arguments for c in parse(dialect.render_calls(calls), dialect).calls] == [{"a": 1, "b": 2}]


@pytest.mark.usefixtures("plugin")
def test_a_native_plugin_dialect_reads_its_providers_json_and_typed_events() -> None:
    result = parse(
        '{"say": "Hi. "}\n{"do": "get_weather", "with": {"city": "Paris"}, "id": "c7"}', "plugin_wire"
    )
    assert result.content == "Hi. "
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [("c7", "get_weather", {"city": "Paris"})]
    p = stream_parser("plugin_wire")
    assert p.feed_event(TextChunk("a")) == [TextDelta("a")]
    p.feed_event(ToolCallDone("k", None, "ping", {}))
    p.close()
    assert [c.name for c in p.result.calls] == ["ping"]
    assert get_dialect("plugin_wire").model_events({"say": "x"}) == [TextChunk("x")]


def test_a_declared_call_opener_without_a_body_names_the_fix() -> None:
    class Bodiless(Dialect):
        name: ClassVar[str] = "test_bodiless"
        openers = (Opener("<c>", ends=("</c>",)),)

        def render_tools(self, tools: object) -> str:
            return ""

        def render_calls(self, calls: object) -> str:
            return ""

    for _ in range(2):  # every time: openers are remembered only once they pass
        with pytest.raises(
            UserError, match=r"opener '<c>' reads calls but has no body format: give it body="
        ):
            parse("<c>x</c>", Bodiless())
