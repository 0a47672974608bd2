"""`feed`'s inline paths (plain text between regions, a marker's start held back and let go) read what the
general path reads: the result, and the events in order, for every way of cutting an output in two or three."""

import json

import pytest

from tether.dialects import (
    CallDelta,
    JsonCalls,
    Opener,
    ParseEvent,
    ParseResult,
    ReasoningDelta,
    RegionParser,
    TextDelta,
    ToolIndex,
    parse,
    stream_parser,
)
from tether.dialects._calls import JsonAnnouncer

# Outputs full of near misses: words and tokens that begin like a marker, at every position in a delta.
CASES = [
    ("firefunction_v2", 'of fun funct functool f<b <thin f\nfunctools[{"name": "f", "arguments": {"a": 1}}]'),
    ("firefunction_v2", "for a forecast, of functoo or functools or f"),
    ("firefunction_v2", '<think>fun</think>off functools[{"name": "f", "arguments": {}}]'),
    ("phi4_mini", 'f ff fu fun <<thin ffunctools[{"name": "f", "arguments": {"a": 1}}] after'),
    ("gigachat3", 'of function ca function call<|role_s { "x" } f{"name": "f", "arguments": {"a": 1}}'),
    ("gigachat3", 'a <|function_cal <|function_call|>{"name": "f", "arguments": {"a": 1}}'),
    ("gigachat3", 'prose then function call<|role_sep|>\n{"name": "f", "arguments": {"a": 1}}'),
    ("mistral", 'a [b] [TOOL_CA [TOOL [THIN [THINK]hm[/THINK] [TOOL_CALLS]f[ARGS]{"a": 1}'),
    ("granite", 'x <| <|tool <|tool_call|>[{"name": "f", "arguments": {"a": 1}}]'),
    ("functionary_v3_2", 'all>>> x >>f\n{"a": 1}'),
    ("json_tool_list", 'a [b] <tool <tools>[{"name": "f", "arguments": {"a": 1}}]'),
    (
        "hermes",
        'a <b <tool_ca <think>t</think> <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call> z',
    ),
    ("hermes", '<tool_call>\n{"name": "f", "arguments": {"a": {"b": [1, "}"]}} }\n  </tool_call>'),
    ("llama3_json", '{"name": "f", "parameters": {"a": {"b": 1}}}'),
    ("harmony", "<|start|>assistant<|channel|>final<|message|>a <|b <|en f<|end|>"),
    ("yaml", "tool\n```yam ```yaml\ntype: tool_call\nname: f\narguments:\n  a: 1\n```\nt"),
    ("command_r", 'Act Action: x\nAction: ```json\n[{"tool_name": "f", "parameters": {"a": 1}}]\n```'),
]


def _events(text: str, dialect: str, cuts: tuple[int, ...]) -> tuple[ParseResult, list[ParseEvent]]:
    p = stream_parser(dialect)
    events: list[ParseEvent] = []
    last = 0
    for cut in (*cuts, len(text)):
        events += p.feed(text[last:cut])
        last = cut
    events += p.close()
    return p.result, events


def _merged(events: list[ParseEvent]) -> list[tuple[str, str]]:
    """The events with consecutive text, reasoning and argument deltas joined: a split may only cut them up."""
    out: list[tuple[str, str]] = []
    for e in events:
        if isinstance(e, TextDelta):
            kind, text = "text", e.text
        elif isinstance(e, ReasoningDelta):
            kind, text = "reasoning", e.text
        elif isinstance(e, CallDelta):
            kind, text = f"arguments of {e.id}", e.arguments_delta
        else:
            kind, text = type(e).__name__, repr(e)
        if (
            out
            and out[-1][0] == kind
            and kind in ("text", "reasoning", f"arguments of {getattr(e, 'id', '')}")
        ):
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))
    return out


@pytest.mark.parametrize(("dialect", "text"), CASES)
def test_every_cut_in_two_and_three_reads_as_the_whole(dialect: str, text: str) -> None:
    whole = parse(text, dialect)
    _, whole_events = _events(text, dialect, ())
    expected = _merged(whole_events)
    n = len(text)
    for i in range(n + 1):
        for j in range(i, min(n, i + 12) + 1):  # a third cut close to the second: short deltas
            result, events = _events(text, dialect, (i, j))
            assert result == whole, (i, j)
            assert _merged(events) == expected, (i, j)


@pytest.mark.parametrize(("dialect", "text"), CASES)
def test_four_character_deltas_read_as_the_whole(dialect: str, text: str) -> None:
    for shift in range(4):
        result, events = _events(text, dialect, tuple(range(shift, len(text), 4)))
        assert result == parse(text, dialect)
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == result.content


def test_a_word_marker_held_back_and_let_go_is_passed_on_whole() -> None:
    """`of` then ` you`: the `f` that may begin `functools` waits for the next delta, then goes with it."""
    p = stream_parser("firefunction_v2")
    assert p.feed("of") == [TextDelta("o")]
    assert p.feed(" you") == [TextDelta("f you")]
    assert p.feed("f") == []
    assert p.feed("unc") == []
    assert p.feed("tion") == [TextDelta("function")]
    assert p.feed(" fu") == [TextDelta(" ")]
    assert p.feed('nctools[{"name": "g", "arguments": {}}]') == []
    p.close()
    assert p.result.content == "of youfunction "
    assert [c.name for c in p.result.calls] == ["g"]


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
        '<tool_call>\n{"name": "f", "arguments":  {"a": {"b": "}"}} }\n</tool_call>',
    ],
)
def test_streamed_argument_fragments_join_to_the_arguments_json_at_every_cut(text: str) -> None:
    """The object's closing brace before a partly arrived end marker, and blanks before the arguments, are not
    fragments of the arguments (both were, at some cuts)."""
    for i in range(len(text) + 1):
        for j in range(i, min(len(text), i + 12) + 1):
            result, events = _events(text, "hermes", (i, j))
            fragments = "".join(e.arguments_delta for e in events if isinstance(e, CallDelta))
            assert json.loads(fragments) == result.calls[0].arguments, (i, j, fragments)


class _Fragile(RegionParser):
    """Routes plain text through a hook that fails on `!` (a dialect's bug)."""

    openers = (
        Opener("functools", body=JsonCalls(several=True)),
        Opener("<think>", "reasoning", ends=("</think>",)),
    )

    def after_text(self, text: str) -> None:
        if "!" in text:
            raise RuntimeError("hook failed")
        super().after_text(text)


@pytest.mark.parametrize("cuts", [(2, 7), (3, 7), (2, 4, 7), (1, 2, 3, 4, 5, 6, 7)])
def test_a_hook_failing_on_text_let_go_after_a_hold_leaves_the_parser_broken(cuts: tuple[int, ...]) -> None:
    text = "of! and more after"  # `f` is held back, then let go with the `!` that breaks the hook
    p = _Fragile("fragile", ToolIndex.of(None))
    last = 0
    for cut in (*cuts, len(text)):
        p.feed(text[last:cut])
        last = cut
    p.close()
    [error] = p.result.errors
    assert error.message.startswith("internal parser error (RuntimeError: hook failed)")
    assert "more after" not in p.result.content


# Bodies near the whole-body read's edge (`JsonAnnouncer.whole`: strict JSON, exactly a name then arguments):
# each must read, and stream its events, as the same body streamed in pieces.
WHOLE_BODIES = [
    '{"name": "f", "arguments": {"a": 1}}',
    '\n {"name":"f","arguments":{"a":[1,{"b":"}"}]}}  \n',
    '{"name": " f ", "arguments": {}}',
    '{"name": "f", "arguments": {"a": 1}, "id": "x"}',
    '{"name": "f", "arguments": {"a": 1}, "arguments": {"b": 2}}',
    '{"name": "f", "parameters": {"a": 1}}',
    '{"name": "f", "arguments": "{\\"a\\": 1}"}',
    '{"name": "f", "arguments": [1]}',
    '{"name": "f", "arguments": {"a": 1}} trailing',
    '{"name": "f", "arguments": {"a": 1}',
    '{"name": "f", "arguments": {"a": NaN}}',
    '{"name": "f", "arguments": {\'a\': 1}}',
    '\x0b{"name": "f", "arguments": {"a": 1}}',
    '{"name": "f\tg", "arguments": {"a": 1}}',
    '{"name": "  ", "arguments": {"a": 1}}',
    '{"name": "f", "arguments":\u00a0{"a": 1}}',
    '{"name": "f", "arguments": {"a": 1}}}',
    '[{"name": "f", "arguments": {"a": 1}}]',
]


@pytest.mark.parametrize("body", WHOLE_BODIES)
def test_a_hermes_body_read_whole_reads_as_streamed(body: str) -> None:
    text = f"a <tool_call>{body}</tool_call> z"
    whole, whole_events = _events(text, "hermes", ())
    expected = _merged(whole_events)
    start = text.index(body)
    for i in range(start + 1, start + len(body)):  # every cut inside the body: it streams
        result, events = _events(text, "hermes", (i,))
        assert result == whole, i
        assert _merged(events) == expected, i


@pytest.mark.parametrize("body", WHOLE_BODIES)
def test_the_one_decode_reads_of_a_hermes_body_equal_the_general_path(
    body: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`JsonAnnouncer.whole` (a body that arrived whole) and `finish_call` (one that streamed) read what
    `progress`, `finish` and `emit_json_calls` read, for the whole output and every cut inside the body."""
    text = f"a <tool_call>{body}</tool_call> z"
    start = text.index(body)
    cuts = [(), *((i,) for i in range(start + 1, start + len(body)))]
    fast = [_events(text, "hermes", c) for c in cuts]

    def declined(self: JsonAnnouncer, body: str, span: tuple[int, int]) -> bool:
        return False

    monkeypatch.setattr(JsonAnnouncer, "whole", declined)
    monkeypatch.setattr(JsonAnnouncer, "finish_call", declined)
    general = [_events(text, "hermes", c) for c in cuts]
    for cut, (result, events), (expected, expected_events) in zip(cuts, fast, general, strict=True):
        assert result == expected, cut
        assert _merged(events) == _merged(expected_events), cut
