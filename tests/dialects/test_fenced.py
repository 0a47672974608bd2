from tether.dialects import parse, render_tools
from tether.types import ToolSpec

from .conftest import StreamCheck

WGET = ToolSpec(
    name="wget",
    description="Downloads content from a URI with timeout.",
    input_schema={
        "type": "object",
        "properties": {
            "uri": {"type": "string", "description": "What to fetch"},
            "timeoutMs": {"type": "number"},
        },
        "required": ["uri"],
    },
)


def test_seed_003_blocks_with_javascript_literals_are_read(check_stream: StreamCheck) -> None:
    text = (
        "Let me fetch it.\n```tool\nreturn wget('https://x.org', 5000);\n```\n"
        "```tool\nreturn wget({uri: `https://y.org`, timeoutMs: 1_000,});\nreturn finalResponse();\n```"
    )
    result = check_stream(text, "fenced", [WGET])
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("wget", {"uri": "https://x.org", "timeoutMs": 5000}),
        ("wget", {"uri": "https://y.org", "timeoutMs": 1000}),
        ("finalResponse", {}),
    ]
    assert result.content == "Let me fetch it.\n\n"


def test_nested_literals_undefined_and_trailing_commas_are_javascript(check_stream: StreamCheck) -> None:
    spec = ToolSpec(name="f", input_schema={"type": "object", "properties": {"a": {}, "b": {}}})
    text = "```tool\nreturn f({x: [1, 'two', {y: null,},], z: undefined}, -2.5e1);\n```"
    (call,) = check_stream(text, "fenced", [spec]).calls
    assert call.arguments == {"a": {"x": [1, "two", {"y": None}], "z": None}, "b": -25.0}
    assert call.repairs == ()


def test_too_many_positional_arguments_is_an_error() -> None:
    result = parse("```tool\nreturn wget('a', 1, 2);\n```", "fenced", [WGET])
    assert result.calls == []
    assert [e.message for e in result.errors] == ["wget takes 2 arguments, 3 given"]


def test_the_tool_prompt_has_typescript_signatures_and_final_response() -> None:
    prompt = render_tools("fenced", [WGET])
    assert "/**\n * Downloads content from a URI with timeout.\n * @param uri What to fetch\n */" in prompt
    assert "function wget(uri: string, timeoutMs?: number): unknown;" in prompt
    assert "function finalResponse(): string;" in prompt
    assert "```tool\nreturn functionName(arg1, arg2);\n```" in prompt
