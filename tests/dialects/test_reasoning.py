"""Reasoning: a call written inside it is not a call, and output may begin inside a block the template opened."""

import pytest

from tether.dialects import ParseResult, parse, stream_parser
from tether.exceptions import UserError

from .conftest import StreamCheck
from .test_auto import CASES as AUTO_CASES
from .test_families import CASES as FAMILY_CASES

_DS = "<\uff5ctool\u2581calls\u2581begin\uff5c><\uff5ctool\u2581call\u2581begin\uff5c>f<\uff5ctool\u2581sep\uff5c>"
CALLS: dict[str, str] = {
    **{dialect: text for text, dialect in AUTO_CASES},
    **dict(FAMILY_CASES),
    "deepseek_v31": _DS
    + '{"a": 1}<\uff5ctool\u2581call\u2581end\uff5c><\uff5ctool\u2581calls\u2581end\uff5c>',
    "json_tool_list": '[{"name": "f", "parameters": {"a": 1}}]',
    "xlam": '[{"name": "f", "arguments": {"a": 1}}]',
    "olmo3_pythonic": "<function_calls>f(a=1)</function_calls>",
    "nemotron_v2": '<TOOLCALL>[{"name": "f", "arguments": {"a": 1}}]</TOOLCALL>',
    "apriel": '<tool_calls>[{"name": "f", "arguments": {"a": 1}}]</tool_calls>',
}
"""One call `f(a=1)` in each format that has a reasoning block."""
MARKERS = {
    "mistral": ("[THINK]", "[/THINK]"),
    "seed_oss": ("<seed:think>", "</seed:think>"),
    "gemma4": ("<|channel>", "<channel|>"),
    "command_r": ("<|START_THINKING|>", "<|END_THINKING|>"),
    "apriel": ("Here are my reasoning steps:", "[BEGIN FINAL RESPONSE]"),
}
NO_REASONING = ("fenced", "yaml", "llama3_json", "json_calls", "functionary_v3_1", "functionary_v3_2")
WITH_REASONING = sorted(d for d in CALLS if d not in NO_REASONING)


def _markers(dialect: str) -> tuple[str, str]:
    return MARKERS.get(dialect, ("<think>", "</think>"))


def _check_open(text: str, dialect: str) -> ParseResult:
    """Parse `text` as beginning inside reasoning, whole and fed in pieces of every size from 1 to 9."""
    whole = parse(text, dialect, reasoning_open=True)
    for size in range(1, 10):
        p = stream_parser(dialect, reasoning_open=True)
        for i in range(0, len(text), size):
            p.feed(text[i : i + size])
        p.close()
        assert p.result == whole, f"split every {size} characters"
    return whole


@pytest.mark.parametrize("dialect", WITH_REASONING)
def test_a_call_written_in_reasoning_is_not_a_call(check_stream: StreamCheck, dialect: str) -> None:
    start, end = _markers(dialect)
    thought = f"I could write {CALLS[dialect]} here."
    result = check_stream(f"{start}{thought}{end}{CALLS[dialect]}", dialect)
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"a": 1})]
    assert result.reasoning == thought


@pytest.mark.parametrize("dialect", [*WITH_REASONING, "auto"])
def test_output_beginning_inside_reasoning_is_read_as_the_template_meant(dialect: str) -> None:
    sample = CALLS["hermes" if dialect == "auto" else dialect]
    end = _markers(dialect)[1]
    thought = f"I could write {sample} here."
    result = _check_open(f"{thought}{end}\n{sample}", dialect)
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"a": 1})]
    assert result.reasoning == thought


def test_a_repeated_start_marker_is_not_reasoning_text() -> None:
    result = _check_open("\n<think>hm</think>Done.", "hermes")
    assert (result.reasoning, result.content) == ("hm", "Done.")


def test_output_that_never_closes_the_open_reasoning_is_all_reasoning() -> None:
    result = _check_open('Still thinking <tool_call>{"name": "f", "arguments": {}}</tool_call>', "hermes")
    assert (result.calls, result.content) == ([], "")
    assert result.reasoning == 'Still thinking <tool_call>{"name": "f", "arguments": {}}</tool_call>'


@pytest.mark.parametrize("dialect", NO_REASONING)
def test_a_format_with_no_reasoning_block_refuses_to_begin_inside_one(dialect: str) -> None:
    with pytest.raises(UserError, match="no reasoning block"):
        stream_parser(dialect, reasoning_open=True)
