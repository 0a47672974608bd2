from tether.dialects import ParseResult, parse
from tether.types import Provenance, ToolCall, ToolSpec

from .conftest import StreamCheck


def test_a_call_list_with_python_and_json_literals_is_read(check_stream: StreamCheck) -> None:
    text = '[get_weather(city="Paris", days=3, metric=True, extra=null), now()]'
    assert check_stream(text, "pythonic") == ParseResult(
        dialect="pythonic",
        calls=[
            ToolCall(
                id="call_0",
                name="get_weather",
                arguments={"city": "Paris", "days": 3, "metric": True, "extra": None},
                provenance=Provenance(dialect="pythonic", span=(1, 59)),
            ),
            ToolCall(id="call_1", name="now", provenance=Provenance(dialect="pythonic", span=(61, 66))),
        ],
    )


def test_a_bare_call_at_the_start_counts(check_stream: StreamCheck) -> None:
    result = check_stream('cmd_controller.execute(command="dir D:\\\\")', "pythonic")
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("cmd_controller.execute", {"command": "dir D:\\"})
    ]


def test_calls_inside_prose_are_found_and_prose_stays_content(check_stream: StreamCheck) -> None:
    result = check_stream(
        "Here's a tool call: [get_weather(location='New York')] done [not a call]", "pythonic"
    )
    assert [c.name for c in result.calls] == ["get_weather"]
    assert result.content == "Here's a tool call:  done [not a call]"


def test_prose_is_not_a_call(check_stream: StreamCheck) -> None:
    result = check_stream("No function matches the user's request.", "pythonic")
    assert result == ParseResult(dialect="pythonic", content="No function matches the user's request.")


def test_positional_arguments_follow_the_tool_parameter_order() -> None:
    spec = ToolSpec(name="f", input_schema={"type": "object", "properties": {"a": {}, "b": {}}})
    assert parse("[f(1, b=2)]", "pythonic", [spec]).calls[0].arguments == {"a": 1, "b": 2}


def test_a_malformed_call_is_an_error_and_the_others_stay(check_stream: StreamCheck) -> None:
    result = check_stream("[f(a=1), g(b=datetime(2024))]", "pythonic")
    assert [c.name for c in result.calls] == ["f"]
    assert [e.message for e in result.errors] == ["in the arguments of g: unexpected word 'datetime'"]


def test_olmo3_reads_one_call_per_line(check_stream: StreamCheck) -> None:
    text = "<function_calls>get_weather(city='SF')\nregister(name='Doe', age=37)</function_calls>"
    result = check_stream(text, "olmo3_pythonic")
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "SF"}),
        ("register", {"name": "Doe", "age": 37}),
    ]
