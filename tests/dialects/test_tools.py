from typing import Any

import pytest

from tether.dialects import ToolIndex
from tether.dialects._tools import coerce_text_value
from tether.tools import Toolset, tool
from tether.types import Repair

PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
}


@tool
def get_weather(city: str, days: int = 1) -> str:
    """Weather."""
    return city


@pytest.mark.parametrize(
    "tools",
    [
        {"type": "function", "function": {"name": "get_weather", "parameters": PARAMS}},
        {"name": "get_weather", "input_schema": PARAMS},
        {"functionDeclarations": [{"name": "get_weather", "parameters": PARAMS}]},
        [{"name": "get_weather", "parameters": {**PARAMS, "type": "dict"}}],
        Toolset(get_weather),
        get_weather,
    ],
)
def test_tools_in_every_format_give_names_and_parameter_order(tools: Any) -> None:
    index = ToolIndex.of(tools)
    assert index.parameters("get_weather") == ["city", "days"]
    days = index.param_schema("get_weather", "days")
    assert days is not None
    assert days["type"] == "integer"


def test_bfcl_type_names_are_read_as_json_schema() -> None:
    index = ToolIndex.of(
        [{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}}}}]
    )
    assert index.param_schema("f", "x") == {"type": "number"}


def test_text_values_are_typed_by_the_schema_and_the_coercion_recorded() -> None:
    assert coerce_text_value("3", {"type": "integer"}, "$.days") == (
        3,
        Repair(kind="coerced", message="read '3' as an integer", path="$.days"),
    )
    assert coerce_text_value("3", {"type": "string"}, "$.s") == ("3", None)
    assert coerce_text_value("maybe", {"type": "boolean"}, "$.b") == ("maybe", None)
    assert coerce_text_value('{"a": 1}', None, "$.o") == ({"a": 1}, None)
