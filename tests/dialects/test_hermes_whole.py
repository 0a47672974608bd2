"""Hermes's shorter way through an output that arrives whole gives the events and result the general path
gives (a plain `RegionParser` over the same openers), whatever the output holds and whatever follows it."""

from typing import Any

import pytest

from tether.dialects import CallStarted, get_dialect, parse
from tether.dialects._regions import RegionParser, _plan, region_parser  # pyright: ignore[reportPrivateUsage]
from tether.dialects._tools import ToolIndex
from tether.dialects.hermes import Hermes

TOOLS = ToolIndex.of(
    [
        {
            "name": "add",
            "description": "Add.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        }
    ]
)
CALL = '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>'
OTHER = '<tool_call>{"name":"add","arguments":{"a":1,"b":[1,{"x":"</tool_call"}]}}</tool_call>'

OUTPUTS = {
    "one call": CALL,
    "compact call": OTHER,
    "two calls on lines": f"{CALL}\n{CALL}",
    "fifty calls": "\n".join([CALL] * 50),
    "calls then prose": f"{CALL}\nDone, the sum is 5.",
    "calls then a think block": f"{CALL}\n<think>hm</think>{CALL}",
    "calls with markup between": f"{CALL}\n<b>bold</b>\n{CALL}",
    "blank between calls": f"{CALL}\n\n  \t\n{CALL}",
    "a call then an open region": f"{CALL}\n<tool_call>\n" + '{"name": "add", "arguments": {"a": 1',
    "a call then a marker's start": f"{CALL}\n<tool_",
    "end marker inside a string": '<tool_call>{"name": "add", "arguments": {"s": "</tool_call>"}}</tool_call>',
    "not strict JSON": "<tool_call>{'name': 'add', 'arguments': {'a': 1, 'b': 2}}</tool_call>",
    "strict then lenient": f"{CALL}\n" + "<tool_call>{name: 'add', arguments: {a: 1}}</tool_call>",
    "no arguments object": '<tool_call>{"name": "add", "arguments": [1, 2]}</tool_call>',
    "unknown tool": '<tool_call>{"name": "nope", "arguments": {}}</tool_call>',
    "padded name": '<tool_call>{"name": " add ", "arguments": {"a": 1}}</tool_call>',
    "empty name": '<tool_call>{"name": " ", "arguments": {}}</tool_call>',
    "trailing junk in the region": '<tool_call>{"name": "add", "arguments": {"a": 1}} extra</tool_call>',
    "two objects in one region": '<tool_call>{"name": "add", "arguments": {}}\n{"name": "add", "arguments": {}}</tool_call>',
    "unterminated": '<tool_call>{"name": "add", "arguments": {"a": 1}}',
    "marker only": "<tool_call>",
    "marker and end only": "<tool_call></tool_call>",
    "same ids wanted": f"{CALL}{CALL}{CALL}",
    "large arguments": '<tool_call>{"name": "add", "arguments": {"text": "'
    + "é\\n" * 20_000
    + '"}}</tool_call>',
    "text first": f"Sure.\n{CALL}",
    "blank first": f"\n{CALL}",
    "prose only": "5",
}


def fresh(dialect_parser: bool) -> RegionParser:
    if dialect_parser:
        parser = get_dialect("hermes").stream_parser(TOOLS)
        assert type(parser) is not RegionParser  # the dialect's own, with the shorter way
        assert isinstance(parser, RegionParser)
        return parser
    return region_parser("hermes", TOOLS, Hermes.openers)


def run(dialect_parser: bool, deltas: list[str], reasoning_open: bool = False) -> tuple[Any, ...]:
    parser = fresh(dialect_parser)
    if reasoning_open:
        parser.open_reasoning()
    events = [parser.feed(d) for d in deltas]
    closed = parser.close()
    return events, closed, parser.result, parser.first_call_at, parser.reasoned, parser.busy_since


@pytest.mark.parametrize("name", list(OUTPUTS))
@pytest.mark.parametrize("after", [[], ["\nmore text"], ["\n", CALL], ["<tool_call>", '{"name": "add"']])
@pytest.mark.parametrize("reasoning_open", [False, True])
def test_an_output_fed_whole_reads_as_the_general_path_reads_it(
    name: str, after: list[str], reasoning_open: bool
) -> None:
    deltas = [OUTPUTS[name], *after]
    assert run(True, deltas, reasoning_open) == run(False, deltas, reasoning_open)


@pytest.mark.parametrize(
    "name", ["one call", "two calls on lines", "calls then prose", "not strict JSON", "padded name"]
)
def test_the_whole_output_equals_any_split_of_it(name: str) -> None:
    """Split, no region arrives whole: the announcer streams each (`progress`), and its result and the names
    it announces are what the whole output's shorter way (`read_whole_call`) gives."""
    text = OUTPUTS[name]
    whole_parser = get_dialect("hermes").stream_parser(TOOLS)
    announced = [e for e in [*whole_parser.feed(text), *whole_parser.close()] if isinstance(e, CallStarted)]
    whole = parse(text, "hermes", TOOLS)
    assert whole_parser.result == whole
    for size in (1, 3, 7, 64, 65):
        parser = get_dialect("hermes").stream_parser(TOOLS)
        events = [e for i in range(0, len(text), size) for e in parser.feed(text[i : i + size])]
        events += parser.close()
        assert parser.result == whole
        assert [e for e in events if isinstance(e, CallStarted)] == announced


def test_a_whole_call_is_read_once_with_its_span() -> None:
    result = parse(f"{CALL}\n{CALL}", "hermes", TOOLS)
    assert [c.arguments for c in result.calls] == [{"a": 2, "b": 3}, {"a": 2, "b": 3}]
    assert [c.provenance.span if c.provenance else None for c in result.calls] == [
        (0, len(CALL)),
        (len(CALL) + 1, 2 * len(CALL) + 1),
    ]
    assert len({c.id for c in result.calls}) == 2
    assert result.content == "\n"


def test_a_whole_output_of_calls_takes_the_shorter_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """The general path (`_process`) is not reached for an output of strict calls fed whole: if the parser's
    internals are renamed, this fails rather than the shorter way silently going unused."""
    parser = get_dialect("hermes").stream_parser(TOOLS)

    def general(*args: object) -> None:
        raise AssertionError("the general path was taken")

    monkeypatch.setattr(type(parser), "_process", general)
    events = parser.feed(f"{CALL}\n{CALL}")
    call = ["CallStarted", "CallDelta", "CallCompleted"]
    assert [type(e).__name__ for e in events] == [*call, "TextDelta", *call]


def test_the_deferred_mark_is_the_plan_s_one_mark() -> None:
    """A hermes parser defers its scanning plan on the promise that every marker begins with `<` (and none
    counts only at a line's or the output's start): the plan itself must say so."""
    plan = _plan(Hermes.openers)
    parser = fresh(True)
    assert plan.mark == type(parser)._deferred_mark == "<"  # pyright: ignore[reportPrivateUsage]
    assert not plan.at_start
    assert not plan.lines


@pytest.mark.parametrize("output", ["5", "Sure, no tools needed.", CALL, f"{CALL}\n{CALL}", ""])
def test_plain_text_and_whole_calls_are_read_without_a_scanning_plan(output: str) -> None:
    """The shorter way stays used: a fresh parser fed only plain text, or whole calls, never works out how
    to scan (if it did, every text turn would pay for it again)."""
    parser = fresh(True)
    parser.feed(output)
    parser.close()
    assert parser._planned is False  # pyright: ignore[reportPrivateUsage]
    assert parser.result == parse(output, "hermes", TOOLS)


QUERIES = ("plain_text_until", "busy_since", "partial_calls", "first_call_at", "reasoned")


def ask(parser: RegionParser) -> tuple[Any, ...]:
    return tuple(
        getattr(parser, q)() if q in ("plain_text_until", "partial_calls") else getattr(parser, q)
        for q in QUERIES
    )


@pytest.mark.parametrize(
    "name", [n for n in OUTPUTS if len(OUTPUTS[n]) < 1000]
)  # each ask parses what is open
@pytest.mark.parametrize("size", [1, 5, 64, 10**6])
@pytest.mark.parametrize("asks_first", [False, True])
def test_a_parser_that_defers_its_plan_answers_as_one_that_does_not(
    name: str, size: int, asks_first: bool
) -> None:
    """Whatever is asked of it, and when (before its first delta, between deltas, after close), a hermes
    parser answers as the general one, with its plan worked out or still deferred."""
    text = OUTPUTS[name]
    parsers = [fresh(True), fresh(False)]
    answers: list[list[Any]] = [[], []]
    for parser, said in zip(parsers, answers, strict=True):
        if asks_first:
            said.append(ask(parser))
        for i in range(0, len(text), size):
            said.append(parser.feed(text[i : i + size]))
            said.append(ask(parser))
        said.append(parser.close())
        said.append(ask(parser))
        said.append(parser.result)
    assert answers[0] == answers[1]
