from tether.dialects import ParseResult, parse
from tether.tools import Tool
from tether.types import Provenance, Repair, ToolCall, ToolSpec

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


def test_a_variable_name_as_a_value_keeps_the_call_as_the_name_with_a_repair(
    check_stream: StreamCheck,
) -> None:
    result = check_stream("[train(data=my_data, epochs=3), log(event=this.logEvent)]", "pythonic")
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("train", {"data": "my_data", "epochs": 3}),
        ("log", {"event": "this.logEvent"}),
    ]
    assert result.calls[0].repairs == (
        Repair(
            kind="unresolved_name",
            message="data=my_data names a variable, not a value: read as the string 'my_data'",
            path="$.data",
        ),
    )
    assert (result.errors, result.content) == ([], "")


def test_a_lone_call_with_a_variable_name_is_a_call_not_content(check_stream: StreamCheck) -> None:
    result = check_stream("format(event=logEvent)", "pythonic")
    assert [(c.name, c.arguments) for c in result.calls] == [("format", {"event": "logEvent"})]
    assert result.content == ""


def test_an_unresolved_name_is_accepted_as_a_string_and_refused_as_a_number() -> None:
    schema = {"type": "object", "properties": {"data": {"type": "string"}, "rate": {"type": "number"}}}
    tool: Tool[..., object] = Tool(ToolSpec(name="train", input_schema=schema))
    as_string, as_number = parse("[train(data=my_data), train(rate=learning_rate)]", "pythonic").calls
    assert tool.validate_call(as_string).ok
    [problem] = tool.validate_call(as_number).problems
    assert (problem.path, problem.message) == ("$.rate", 'must be a number; got string "learning_rate"')


def test_an_expression_is_not_taken_for_a_name(check_stream: StreamCheck) -> None:
    result = check_stream("[f(a=x + 1), g(b=now())]", "pythonic")
    assert result.calls == []
    assert [e.message for e in result.errors] == [
        "in the arguments of f: unexpected word 'x'",
        "in the arguments of g: unexpected word 'now'",
    ]


def test_a_call_that_cannot_be_read_does_not_drop_the_calls_after_it(check_stream: StreamCheck) -> None:
    result = check_stream("[f(a=1), g(b=datetime(2024, 1, 1)), h(c='x')]", "pythonic")
    assert [c.name for c in result.calls] == ["f", "h"]
    assert [e.message for e in result.errors] == ["in the arguments of g: unexpected word 'datetime'"]


def test_olmo3_reads_one_call_per_line(check_stream: StreamCheck) -> None:
    text = "<function_calls>get_weather(city='SF')\nregister(name='Doe', age=37)</function_calls>"
    result = check_stream(text, "olmo3_pythonic")
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "SF"}),
        ("register", {"name": "Doe", "age": 37}),
    ]
