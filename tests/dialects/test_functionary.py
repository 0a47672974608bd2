import pytest

from tether.types import ToolSpec

from .conftest import StreamCheck

PYTHON = ToolSpec(
    name="python", input_schema={"type": "object", "properties": {"source": {"type": "string"}}}
)
WEATHER = ToolSpec(
    name="get_weather", input_schema={"type": "object", "properties": {"city": {"type": "string"}}}
)


def test_v3_1_reads_function_tags_and_raw_python(check_stream: StreamCheck) -> None:
    text = 'Sure. <function=get_weather>{"city": "Paris"}</function><|python_tag|>print(1)<|eom_id|>'
    result = check_stream(text, "functionary_v3_1", [PYTHON])
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "Paris"}),
        ("python", {"source": "print(1)"}),
    ]
    assert result.content == "Sure. "


def test_v3_2_reads_the_first_call_its_template_began_and_the_ones_after(check_stream: StreamCheck) -> None:
    text = 'get_weather\n{"city": "Paris"}>>>get_time\n{"zone": "CET"}>>>all\nBoth requested.'
    result = check_stream(text, "functionary_v3_2", [WEATHER])
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"zone": "CET"}),
    ]
    assert result.content == "Both requested."


def test_v3_2_text_first_then_a_call(check_stream: StreamCheck) -> None:
    result = check_stream("all\nLet me check.>>>python\nimport os\nprint(os.getcwd())", "functionary_v3_2")
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("python", {"code": "import os\nprint(os.getcwd())"})
    ]
    assert result.content == "Let me check."


@pytest.mark.parametrize("text", ["In a REPL, >>> print(1) prints 1.", "Hello\nworld", "all good"])
def test_v3_2_prose_is_not_a_call(check_stream: StreamCheck, text: str) -> None:
    result = check_stream(text, "functionary_v3_2")
    assert (result.calls, result.content, result.errors) == ([], text, [])


def test_v3_2_a_heading_then_json_is_not_a_call_unless_a_tool_has_that_name(
    check_stream: StreamCheck,
) -> None:
    text = 'Result\n{"status": "ok"}'
    assert check_stream(text, "functionary_v3_2", [WEATHER]).content == text
    assert check_stream(text, "auto").calls == []


def test_v3_2_arguments_that_are_not_json_are_an_error_and_the_other_calls_stay(
    check_stream: StreamCheck,
) -> None:
    result = check_stream('>>>f\n{"a": 1}>>>g\nnot json>>>h\n{}', "functionary_v3_2")
    assert [c.name for c in result.calls] == ["f", "h"]
    assert [e.message for e in result.errors] == ["arguments of g are not a JSON object"]


def test_v3_1_reads_a_llama_json_call_after_the_python_tag(check_stream: StreamCheck) -> None:
    result = check_stream(
        '<|python_tag|>{"name": "get_weather", "arguments": {"city": "Beijing"}}', "functionary_v3_1"
    )
    assert [(c.name, c.arguments) for c in result.calls] == [("get_weather", {"city": "Beijing"})]
