from typing import Any, ClassVar

import pytest

from tether.dialects import Dialect, StreamParser, ToolIndex, dialect_names, get_dialect, parse
from tether.types import ToolCall, ToolSpec


def _spec(name: str, properties: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name=name, description=name, input_schema={"type": "object", "properties": properties})


TOOLS = [
    _spec(
        "write_note",
        {
            "text": {"type": "string"},
            "quote": {"type": "string"},
            "lines": {"type": "string"},
            "nested": {"type": "object"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "done": {"type": "boolean"},
            "tags": {"type": "array"},
        },
    ),
    _spec("now", {}),
    _spec("search.web", {"query": {"type": "string"}, "limit": {"type": "integer"}}),
]
AWKWARD = {
    "text": "héllo 世界 🎉 — ünïcode",
    "quote": "she said \"hi\" and 'bye' `tick` \\ back",
    "lines": "line one\n\tline two\nline three",
    "nested": {"a": [1, 2.5, {"b": None, "c": True}], "d": {"e": "f"}},
    "count": -7,
    "ratio": 0.125,
    "done": False,
    "tags": ["x", "y z"],
}
CALLS = [
    ToolCall(id="call_a", name="write_note", arguments=AWKWARD),
    ToolCall(id="call_b", name="now", arguments={}),
    ToolCall(id="call_c", name="search.web", arguments={"query": "a < b && c > d", "limit": 3}),
]


def _round_trip(dialect: str, calls: list[ToolCall]) -> list[tuple[str, dict[str, Any]]]:
    text = get_dialect(dialect).render_calls(calls)
    result = parse(text, dialect, TOOLS)
    assert result.errors == [], text
    return [(c.name, c.arguments) for c in result.calls]


@pytest.mark.parametrize("dialect", dialect_names())
def test_rendered_calls_parse_back_to_the_same_calls(dialect: str) -> None:
    assert _round_trip(dialect, CALLS) == [(c.name, c.arguments) for c in CALLS]


@pytest.mark.parametrize("dialect", dialect_names())
def test_one_call_with_no_arguments_round_trips(dialect: str) -> None:
    assert _round_trip(dialect, CALLS[1:2]) == [("now", {})]


@pytest.mark.parametrize("dialect", dialect_names())
def test_no_calls_render_as_no_text(dialect: str) -> None:
    assert get_dialect(dialect).render_calls([]) == ""


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini", "kimi_k2"])
def test_formats_that_carry_ids_keep_them(dialect: str) -> None:
    text = get_dialect(dialect).render_calls(CALLS)
    ids = [c.id for c in parse(text, dialect, TOOLS).calls]
    expected = ["functions.write_note:0", "functions.now:1", "functions.search.web:2"]
    assert ids == (expected if dialect == "kimi_k2" else ["call_a", "call_b", "call_c"])


def test_a_dialect_that_cannot_render_calls_cannot_be_made() -> None:
    class _NoRender(Dialect):
        name: ClassVar[str] = "test_no_render"

        def stream_parser(self, tools: ToolIndex) -> StreamParser:
            return get_dialect("hermes").stream_parser(tools)

        def render_tools(self, tools: ToolIndex) -> str:
            return ""

    with pytest.raises(TypeError, match="render_calls"):
        _NoRender()  # pyright: ignore[reportAbstractUsage] - the point of the test
