"""XML-style formats announce a call as soon as its name is known, not when its closing tag arrives."""

import pytest

from tether.dialects import CallCompleted, CallDelta, CallStarted, ParseEvent, parse, stream_parser
from tether.types import ToolSpec

from .conftest import StreamCheck

CALLS = {
    "qwen3_coder_xml": (
        "Checking. <tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    ),
    "glm45": "Checking. <tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
    "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
}


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_the_call_is_announced_once_its_name_is_known(dialect: str) -> None:
    text = CALLS[dialect]
    p = stream_parser(dialect)
    timeline: list[tuple[int, ParseEvent]] = []
    for i in range(0, len(text), 4):
        timeline += [(i + 4, e) for e in p.feed(text[i : i + 4])]
    timeline += [(len(text), e) for e in p.close()]
    started = [(at, e) for at, e in timeline if isinstance(e, CallStarted)]
    assert [e.name for _, e in started] == ["get_weather"]
    assert started[0][0] < text.index("Paris") + 4  # before its first argument has arrived
    (call,) = [e.call for _, e in timeline if isinstance(e, CallCompleted)]
    assert call.id == started[0][1].id
    assert "".join(e.arguments_delta for _, e in timeline if isinstance(e, CallDelta)) == (
        '{"city": "Paris", "days": 3}'
    )
    assert p.result == parse(text, dialect)


_D = "<\uff5cDSML\uff5c"
VALUE = "  x = 1\n"
"""A value with whitespace of its own: leading indentation and a trailing newline."""
WHITESPACE_CASES = [
    ("qwen3_coder_xml", f"<tool_call>\n<function=f>\n<parameter=code>\n{VALUE}\n</parameter>\n</function>\n</tool_call>"),
    ("step3p5_xml", f"<tool_call>\n<function=f>\n<parameter=code>\n{VALUE}\n</parameter>\n</function>\n</tool_call>"),
    ("seed_oss", f"<seed:tool_call>\n<function=f>\n<parameter=code>{VALUE}</parameter>\n</function>\n</seed:tool_call>"),
    ("glm45", f"<tool_call>f\n<arg_key>code</arg_key>\n<arg_value>{VALUE}</arg_value>\n</tool_call>"),
    ("glm47", f"<tool_call>f<arg_key>code</arg_key><arg_value>{VALUE}</arg_value></tool_call>"),
    ("minicpm5_xml", f'<function name="f"><param name="code">{VALUE}</param></function>'),
    (
        "deepseek_v32",
        f'{_D}function_calls>\n{_D}invoke name="f">\n{_D}parameter name="code" string="true">{VALUE}'
        f"</\uff5cDSML\uff5cparameter>\n</\uff5cDSML\uff5cinvoke>\n</\uff5cDSML\uff5cfunction_calls>",
    ),
    (
        "deepseek_v32",
        f'{_D}function_calls>\n{_D}invoke name="f">\n{_D}parameter name="code">{VALUE}'
        f"</\uff5cDSML\uff5cparameter>\n</\uff5cDSML\uff5cinvoke>\n</\uff5cDSML\uff5cfunction_calls>",
    ),
]  # fmt: skip
STRING_TOOL = ToolSpec(name="f", input_schema={"type": "object", "properties": {"code": {"type": "string"}}})


@pytest.mark.parametrize(("dialect", "text"), WHITESPACE_CASES)
@pytest.mark.parametrize("tools", [None, [STRING_TOOL]], ids=["no schema", "string schema"])
def test_a_value_keeps_its_own_whitespace_and_loses_only_what_the_format_adds(
    check_stream: StreamCheck, dialect: str, text: str, tools: list[ToolSpec] | None
) -> None:
    result = check_stream(text, dialect, tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"code": VALUE})]
