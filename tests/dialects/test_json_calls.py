import json
import time
from collections.abc import Callable

import pytest

from tether.dialects import CallCompleted, ParseError, parse, stream_parser
from tether.types import Provenance, Repair, ToolCall

from .conftest import StreamCheck

SEED_000 = """```json
{
  "toolCalls": [
    {"type": "say", "id": "v1", "operation": "speak", "parameters": {"utterance": "Let me check..."}},
    {"type": "gmail_list", "id": "g1", "operation": "list", "parameters": {"maxResults": 10}, "priority": 2},
    {"type": "end_turn", "id": "e1", "operation": "end_turn", "parameters": {}}
  ]
}
```"""


def test_seed_000_output_is_read_with_ids_priorities_and_operations(check_stream: StreamCheck) -> None:
    result = check_stream(SEED_000, "json_calls")
    span = (
        0,
        SEED_000.index('"priority": 2}') + len('"priority": 2}'),
    )  # to the end of the call's own object
    assert result.calls[1] == ToolCall(
        id="g1",
        name="gmail_list",
        arguments={"maxResults": 10},
        priority=2,
        annotations=("operation: list",),
        provenance=Provenance(dialect="json_calls", span=span),
    )
    assert [c.id for c in result.calls] == ["v1", "g1", "e1"]
    assert result.content == ""


def test_raw_json_without_a_fence_is_read(check_stream: StreamCheck) -> None:
    text = '{"toolCalls": [{"type": "end_turn", "id": "e1", "operation": "end_turn", "parameters": {}}]}'
    assert [c.name for c in check_stream(text, "json_calls").calls] == ["end_turn"]


def test_invalid_calls_become_errors_while_valid_ones_come_through(check_stream: StreamCheck) -> None:
    text = '{"toolCalls": [{"type": 5, "id": "x"}, {"type": "say", "id": "v1", "parameters": {"utterance": "hi"},},]}'
    result = check_stream(text, "json_calls")
    assert result.calls == [
        ToolCall(
            id="v1",
            name="say",
            arguments={"utterance": "hi"},
            provenance=Provenance(
                dialect="json_calls",
                span=(0, len(text)),
                repairs=(
                    Repair(kind="trailing_comma", message="removed a trailing comma", path="$.toolCalls"),
                    Repair(kind="trailing_comma", message="removed a trailing comma", path="$.toolCalls[1]"),
                ),
            ),
        )
    ]
    assert result.errors == [
        ParseError(
            message="toolCalls[0] needs a string 'type' (the tool's name)",
            dialect="json_calls",
            span=(0, len('{"toolCalls": [{"type": 5, "id": "x"}')),
            raw='{"type": 5, "id": "x"}',
        )
    ]


def test_prose_with_braces_is_content() -> None:
    assert parse("use {braces} freely", "json_calls").content == "use {braces} freely"


def test_call_ids_are_unique_within_an_output(check_stream: StreamCheck) -> None:
    text = json.dumps({"toolCalls": [
        {"type": "f", "id": "x", "parameters": {}},
        {"type": "f", "id": "x", "parameters": {}},
        {"type": "f", "parameters": {}},
        {"type": "f", "id": "call_0", "parameters": {}},
    ]})  # fmt: skip
    assert [c.id for c in check_stream(text, "json_calls").calls] == ["x", "x_2", "call_0", "call_0_2"]


def test_each_call_completes_when_its_own_object_closes_not_when_the_whole_json_does() -> None:
    parser = stream_parser("json_calls")
    completed: list[tuple[str, int]] = []
    fed = 0
    for line in SEED_000.splitlines(keepends=True):
        fed += len(line)
        completed += [(e.call.name, fed) for e in parser.feed(line) if isinstance(e, CallCompleted)]
    parser.close()
    lines = SEED_000.splitlines(keepends=True)
    line_ends = [sum(len(x) for x in lines[: i + 1]) for i in range(len(lines))]
    # the calls are on lines 4, 5 and 6: each completes with its own line, before the list and fence close
    assert completed == [("say", line_ends[3]), ("gmail_list", line_ends[4]), ("end_turn", line_ends[5])]


def test_an_object_that_is_not_strict_json_and_the_rest_are_read_when_the_json_ends() -> None:
    tricky = json.dumps({"type": "a", "id": "1", "parameters": {"s": '}{"\\'}})  # brackets, quote, backslash
    text = (
        '{"toolCalls": [' + tricky + ", {'type': 'b', 'id': '2', 'parameters': {'s': '}'}}, "
        '{"type": "c", "id": "3", "parameters": {}}]}'
    )
    parser = stream_parser("json_calls")
    early = [e.call.name for e in parser.feed(text[:-2]) if isinstance(e, CallCompleted)]
    late = [e.call.name for e in parser.feed(text[-2:]) + parser.close() if isinstance(e, CallCompleted)]
    assert (early, late) == (["a"], ["b", "c"])
    assert parser.result.calls[0].arguments == {"s": '}{"\\'}
    assert parser.result.calls[1].arguments == {"s": "}"}


def test_invalid_json_after_calls_that_were_read_fails_only_the_rest(check_stream: StreamCheck) -> None:
    text = (
        '{"toolCalls": [{"type": "send_chat", "id": "c1", "parameters": {"content": "hi"}}, {"type": ::: }]}'
    )
    result = check_stream(text, "json_calls")
    assert [c.name for c in result.calls] == ["send_chat"]
    assert len(result.errors) == 1
    assert result.errors[0].message.startswith("invalid JSON after toolCalls[0]")


def _streamed_s(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        parser = stream_parser("json_calls")
        for i in range(0, len(text), 16):
            parser.feed(text[i : i + 16])
        parser.close()
        best = min(best, time.perf_counter() - t)
    return best


def _long_string(n: int) -> str:
    return '{"toolCalls": [{"type": "send_chat", "id": "c", "parameters": {"content": "' + "a\\\\" * (n // 3)


def _many_calls(n: int) -> str:  # a quarter as many characters: each is a call to build
    items = (f'{{"type": "f", "id": "{i:06}", "parameters": {{"a": [1, {{}}]}}}}, ' for i in range(n // 224))
    return '{"toolCalls": [' + "".join(items)


@pytest.mark.parametrize("make", [_long_string, _many_calls])
def test_reading_calls_while_they_stream_takes_linear_time(make: Callable[[int], str]) -> None:
    # 16x the text in 16-character pieces: linear work takes ~16x the time, quadratic ~256x
    small, large = make(16_000), make(256_000)
    ratio = min(_streamed_s(large) / max(_streamed_s(small), 1e-4) for _ in range(2))
    assert ratio < 64, f"16x the text took {ratio:.1f}x the time"
