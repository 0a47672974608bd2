import pytest

from tether.dialects import parse

from .conftest import StreamCheck

CASES = [
    ("ernie45", '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>\n'),
    ("jamba", ' <tool_calls>[\n    {"name": "f", "arguments": {"a": 1}}\n]</tool_calls>'),
    ("minimax", '<tool_calls>\n{"name": "f", "arguments": {"a": 1}}\n</tool_calls>'),
    ("granite", '<|tool_call|> [{"name": "f", "arguments": {"a": 1}}]'),
    ("granite_20b_fc", '<function_call> {"name": "f", "arguments": {"a": 1}}'),
    ("internlm2", '<|action_start|><|plugin|>{"name": "f", "parameters": {"a": 1}}<|action_end|>'),
    ("longcat", '<longcat_tool_call>{"name": "f", "arguments": {"a": 1}}</longcat_tool_call>'),
    ("phi4_mini", 'functools[{"name": "f", "arguments": {"a": 1}}]'),
    ("apertus", '<|tools_prefix|>[{"f": {"a": 1}}]<|tools_suffix|>'),
    ("gigachat3", '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "f", "arguments": {"a": 1}}'),
    ("glm47", "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>"),
    ("poolside_v1", "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>"),
    ("step3p5_xml", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"),
    (
        "seed_oss",
        "<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call>",
    ),
    ("lfm2", "<|tool_call_start|>[f(a=1)]<|tool_call_end|>"),
    (
        "command_r",
        '<|START_THINKING|>I will call f.<|END_THINKING|><|START_ACTION|>[\n    {"tool_call_id": "0", '
        '"tool_name": "f", "parameters": {"a": 1}}\n]<|END_ACTION|>',
    ),
    ("command_r", 'Plan: call f.\nAction: ```json\n[{"tool_name": "f", "parameters": {"a": 1}}]\n```'),
    ("nemotron_v2", '<think>Use f.</think><TOOLCALL>[{"name": "f", "arguments": {"a": 1}}]</TOOLCALL>'),
    ("firefunction_v2", ' functools[{"name": "f", "arguments": {"a": 1}}]'),
    ("granite4", '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'),
    ("apriel", '<thinking>Use f.</thinking><tool_calls>[{"name": "f", "arguments": {"a": 1}}]</tool_calls>'),
    (
        "apriel",
        "Here are my reasoning steps:\nUse f.\n[BEGIN FINAL RESPONSE]\n"
        '<tool_calls>[{"name": "f", "arguments": {"a": 1}}]</tool_calls>\n[END FINAL RESPONSE]<|end|>',
    ),
    ("hunyuan_a13b", '<tool_calls><tool_call>f<tool_sep>{"a": 1}</tool_call></tool_calls>'),
    ("hunyuan_a13b", '<tool_calls>[{"name": "f", "arguments": {"a": 1}}]</tool_calls>'),
    ("minicpm5_xml", '<function name="f"><param name="a">1</param></function>\n'),
    (
        "step3",
        '<\uff5ctool_calls_begin\uff5c><\uff5ctool_call_begin\uff5c><steptml:invoke name="f">'
        '<steptml:parameter name="a">1</steptml:parameter></steptml:invoke><\uff5ctool_call_end\uff5c>'
        "<\uff5ctool_calls_end\uff5c>",
    ),
    (
        "deepseek_v32",
        '<\uff5cDSML\uff5cfunction_calls>\n<\uff5cDSML\uff5cinvoke name="f">\n<\uff5cDSML\uff5cparameter name="a" '
        'string="false">1</\uff5cDSML\uff5cparameter>\n</\uff5cDSML\uff5cinvoke>\n</\uff5cDSML\uff5cfunction_calls>',
    ),
    (
        "deepseek_v4",
        '<\uff5cDSML\uff5ctool_calls>\n<\uff5cDSML\uff5cinvoke name="f">\n{"a": 1}\n</\uff5cDSML\uff5cinvoke>\n</\uff5cDSML\uff5ctool_calls>',
    ),
]


@pytest.mark.parametrize(("dialect", "text"), CASES)
def test_each_family_reads_its_format_whole_and_streamed(
    check_stream: StreamCheck, dialect: str, text: str
) -> None:
    result = check_stream(text, dialect)
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"a": 1})]
    assert result.errors == []


def test_command_r_reads_the_answer_between_its_response_tokens_as_content(check_stream: StreamCheck) -> None:
    text = "<|START_THINKING|>No tool needed.<|END_THINKING|><|START_RESPONSE|>Hello!<|END_RESPONSE|>"
    result = check_stream(text, "command_r")
    assert (result.reasoning, result.content, result.calls) == ("No tool needed.", "Hello!", [])


def test_apriel_output_beginning_after_the_reasoning_header_its_template_wrote() -> None:
    text = (
        'The user wants f.\n[BEGIN FINAL RESPONSE]\n<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>'
    )
    result = parse(text, "apriel", reasoning_open=True)
    assert result.reasoning == "The user wants f.\n"
    assert [c.name for c in result.calls] == ["f"]
