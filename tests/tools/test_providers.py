"""Provider and protocol tool JSON: import every format, export to OpenAI / Anthropic / Gemini, round trips."""

from typing import Any

import pytest

from tether.exceptions import UserError
from tether.tools import (
    Tool,
    Toolset,
    export_tools,
    from_anthropic,
    from_gemini,
    from_mcp,
    from_openai,
    spec_from_dict,
    specs_from_json,
    to_anthropic,
    to_gemini,
    to_openai,
)
from tether.types import ToolCall, ToolSpec

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "The city."},
        "days": {"type": "integer", "minimum": 1},
        "unit": {"type": "string", "enum": ["c", "f"]},
    },
    "required": ["city"],
}
SPEC = ToolSpec(name="weather.get", description="Forecast.", input_schema=PARAMETERS)


def test_openai_chat_completions_and_responses_forms() -> None:
    chat = {"type": "function", "function": {"name": "weather.get", "description": "Forecast.",
                                             "parameters": PARAMETERS, "strict": False}}  # fmt: skip
    responses = {
        "type": "function",
        "name": "weather.get",
        "description": "Forecast.",
        "parameters": PARAMETERS,
    }
    assert from_openai(chat) == SPEC.model_copy(update={"metadata": {"strict": False}})
    assert from_openai(responses) == SPEC


def test_anthropic_gemini_and_mcp_forms() -> None:
    assert (
        from_anthropic({"name": "weather.get", "description": "Forecast.", "input_schema": PARAMETERS})
        == SPEC
    )
    gemini = {
        "name": "weather.get", "description": "Forecast.",
        "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING", "description": "The city."},
                       "days": {"type": "INTEGER", "minimum": 1}, "unit": {"type": "STRING", "enum": ["c", "f"]}},
                       "required": ["city"]},
    }  # fmt: skip
    assert from_gemini(gemini) == SPEC
    assert (
        from_gemini({"name": "weather.get", "description": "Forecast.", "parametersJsonSchema": PARAMETERS})
        == SPEC
    )
    mcp = {"name": "weather.get", "description": "Forecast.", "inputSchema": PARAMETERS,
           "annotations": {"readOnlyHint": True}}  # fmt: skip
    assert from_mcp(mcp).side_effects == "none"
    assert from_mcp({**mcp, "annotations": {"idempotentHint": True}}).side_effects == "idempotent"
    assert from_mcp({**mcp, "annotations": {}}).side_effects == "mutating"


def test_formats_are_recognised_by_shape() -> None:
    listing = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
    assert [s.name for s in specs_from_json(listing)] == ["a"]
    declarations: dict[str, Any] = {
        "functionDeclarations": [{"name": "b", "parameters": {"type": "OBJECT", "properties": {}}}]
    }
    assert [s.name for s in specs_from_json(declarations)] == ["b"]
    assert (
        spec_from_dict({"name": "c", "input_schema": {"type": "object"}}).requires_why is False
    )  # Anthropic
    assert spec_from_dict(
        {"name": "d", "input_schema": {"type": "object"}, "category": "fs"}
    ).requires_why  # MOOLLM
    with pytest.raises(UserError, match="Unrecognised tool definition"):
        spec_from_dict({"title": "nope"})


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({"type": "function", "function": {"description": "x"}}, "missing 'name'"),
        (
            {"type": "function", "function": {"name": "x", "parameters": {"type": "string"}}},
            "must describe an object",
        ),
        ({"type": "function", "function": {"name": "x y"}}, "not a valid tool definition"),
        (
            {"name": "x", "parameters": {"type": "dict", "properties": {"a": {"type": "frob"}}}},
            "unknown type 'frob'",
        ),
    ],
)
def test_bad_definitions_are_user_errors(definition: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        spec_from_dict(definition)


def test_exports_round_trip() -> None:
    assert from_openai(to_openai(SPEC)) == SPEC
    assert from_anthropic(to_anthropic(SPEC)) == SPEC
    assert from_gemini(to_gemini(SPEC)) == SPEC


def test_why_is_added_to_exported_schemas_when_required() -> None:
    exported = to_anthropic(SPEC.model_copy(update={"requires_why": True}))
    assert exported["input_schema"]["required"] == ["city", "why"]
    assert exported["input_schema"]["properties"]["why"]["type"] == "string"


def test_openai_strict_mode_closes_objects_and_makes_optional_fields_nullable() -> None:
    exported = to_openai(SPEC, strict=True)
    assert exported["function"]["strict"] is True
    assert exported["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city."},
            "days": {"type": ["integer", "null"], "minimum": 1},
            "unit": {"type": ["string", "null"], "enum": ["c", "f"]},
        },
        "required": ["city", "days", "unit"],
        "additionalProperties": False,
    }


def test_gemini_export_inlines_refs_and_uses_nullable() -> None:
    spec = ToolSpec(
        name="g",
        input_schema={
            "type": "object",
            "$defs": {"Loc": {"type": "object", "properties": {"city": {"type": "string"}}}},
            "properties": {
                "loc": {"anyOf": [{"$ref": "#/$defs/Loc"}, {"type": "null"}]},
                "n": {"const": "x"},
            },
            "additionalProperties": False,
        },
    )
    assert to_gemini(spec)["parameters"] == {
        "type": "OBJECT",
        "properties": {
            "loc": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "nullable": True},
            "n": {"enum": ["x"], "type": "STRING"},
        },
    }


def test_dotted_names_get_reversible_aliases_where_providers_forbid_dots() -> None:
    toolset = Toolset(SPEC, ToolSpec(name="weather_get"), ToolSpec(name="fs.read"))
    names = [t["function"]["name"] for t in export_tools(toolset, "openai")]
    assert names == ["weather_get_2", "weather_get", "fs_read"]
    assert [toolset.get(n).name for n in names] == ["weather.get", "weather_get", "fs.read"]  # pyright: ignore[reportOptionalMemberAccess]
    assert [t["name"] for t in export_tools(toolset, "gemini")] == ["weather.get", "weather_get", "fs.read"]


@pytest.mark.parametrize("parameters", [{}, {"type": "object"}])
def test_parameters_that_name_no_properties_take_any_names(parameters: dict[str, Any]) -> None:
    spec = from_openai({"type": "function", "name": "ping", "parameters": parameters})
    checked = Tool(spec).validate_call(ToolCall(id="c1", name="ping", arguments={"host": "example.org"}))
    assert checked.ok


def test_parameters_that_list_their_properties_refuse_other_names() -> None:
    checked = Tool(SPEC).validate_call(
        ToolCall(id="c1", name="weather.get", arguments={"city": "Oslo", "day": 5})
    )
    assert [str(p) for p in checked.problems] == ["$.day: unknown argument; did you mean `days`?"]
