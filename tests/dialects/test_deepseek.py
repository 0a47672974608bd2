import pytest

from tether.dialects import parse

from .conftest import StreamCheck

SEP, CALL_END = "<\uff5ctool\u2581sep\uff5c>", "<\uff5ctool\u2581call\u2581end\uff5c>"
CALLS_END, CALL_BEGIN = "<\uff5ctool\u2581calls\u2581end\uff5c>", "<\uff5ctool\u2581call\u2581begin\uff5c>"


def _call(name: str, args: str) -> str:
    return f"function{SEP}{name}\n```json\n{args}\n```{CALL_END}"


@pytest.mark.parametrize(
    "begin",
    [
        "<\uff5ctool\u2581calls\u2581begin\uff5c>",
        "<\uff5ctool_calls_begin\uff5c>",
        "<\uff5ctool calls begin\uff5c>",
        "<\uff5ctool\\_calls\\_begin\uff5c>",
        "<\uff5ctool\u2581calls\uff5c>",
    ],
)
def test_r1_reads_each_spelling_of_the_section_token_with_or_without_call_tokens(
    check_stream: StreamCheck, begin: str
) -> None:
    calls = _call("f", '{"a": 1}') + _call("g", "{}")
    text = f"<think>Two cities.</think>\n\n{begin}{CALL_BEGIN}{calls}{CALLS_END}"
    result = check_stream(text, "deepseek_r1")
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"a": 1}), ("g", {})]
    assert (result.reasoning, result.errors) == ("Two cities.", [])


def test_r1_reasoning_opened_by_its_template_holds_no_calls() -> None:
    begin = "<\uff5ctool\u2581calls\u2581begin\uff5c>"
    thought = f"Maybe {begin}{_call('g', '{}')}{CALLS_END}?"
    result = parse(
        f"{thought}</think>{begin}{_call('f', '{}')}{CALLS_END}", "deepseek_r1", reasoning_open=True
    )
    assert [c.name for c in result.calls] == ["f"]
    assert result.reasoning == thought
