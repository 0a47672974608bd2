"""XML-style formats announce a call as soon as its name is known, not when its closing tag arrives."""

import pytest

from tether.dialects import CallCompleted, CallDelta, CallStarted, ParseEvent, parse, stream_parser

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
