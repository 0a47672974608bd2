from tether.dialects import parse

from .conftest import StreamCheck

CALL = '<|tool_call_begin|>functions.{name}:{n}<|tool_call_argument_begin|>{{"a": {n}}}<|tool_call_end|>'


def test_calls_without_the_section_begin_token_are_read(check_stream: StreamCheck) -> None:
    text = (
        "Checking. " + CALL.format(name="f", n=0) + CALL.format(name="g", n=1) + "<|tool_calls_section_end|>"
    )
    result = check_stream(text, "kimi_k2")
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [
        ("functions.f:0", "f", {"a": 0}),
        ("functions.g:1", "g", {"a": 1}),
    ]
    assert (result.content, result.errors) == ("Checking. ", [])


def test_the_section_begin_token_ends_reasoning_the_template_opened() -> None:
    text = "Need the weather.<|tool_calls_section_begin|>" + CALL.format(name="f", n=0)
    result = parse(text, "kimi_k2", reasoning_open=True)
    assert result.reasoning == "Need the weather."
    assert [c.name for c in result.calls] == ["f"]
