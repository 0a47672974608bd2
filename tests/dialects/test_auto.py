import pytest

from tether.dialects import parse, stream_parser

from .conftest import StreamCheck

CASES = [
    ('<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>', "hermes"),
    (
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
        "qwen3_coder_xml",
    ),
    ("<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>", "glm45"),
    ('[TOOL_CALLS]f{"a": 1}', "mistral"),
    ('<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|>', "kimi_k2"),
    ("<|tool_call>call:f{a:1}<tool_call|>", "gemma4"),
    ("[f(a=1)]", "pythonic"),
    ('Sure: {"name": "f", "parameters": {"a": 1}}', "llama3_json"),
    ("```tool\nreturn f({a: 1});\n```", "fenced"),
    ("type: tool_call\ntool: f\nargs:\n  a: 1\n", "yaml"),
    ('{"toolCalls": [{"type": "f", "id": "x", "parameters": {"a": 1}}]}', "json_calls"),
]


@pytest.mark.parametrize(("text", "dialect"), CASES)
def test_auto_detects_the_format(check_stream: StreamCheck, text: str, dialect: str) -> None:
    result = check_stream(text, "auto")
    assert result.dialect == dialect
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"a": 1})]


def test_plain_text_is_content() -> None:
    result = parse("<think>hm</think>Just text, no calls.", "auto")
    assert (result.content, result.reasoning, result.calls) == ("Just text, no calls.", "hm", [])


def test_auto_commits_while_streaming_once_the_first_call_is_certain() -> None:
    p = stream_parser("auto")
    p.feed('Checking. <tool_call>{"name": "f", "arguments": {}}</tool_call>')
    assert p.result.dialect == "hermes"
    events = p.feed(" more")
    assert [e.kind for e in events] == ["text"]
