"""Argument validation per call: tether's compiled validators against a plain pydantic TypeAdapter floor.

The same weather arguments validated four ways: the floor (a TypeAdapter of the equivalent TypedDict),
a `@tool` function (JSON Schema check + typed values), a tool declared as OpenAI JSON (JSON Schema only),
and a refused call (the slow path that lists every problem and applies safe coercions).
"""

from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from _timing import per_call_us, row
from tether.tools import from_openai, tool
from tether.tools._tool import Tool
from tether.types import ToolCall


class WeatherArgs(TypedDict):
    city: str
    days: NotRequired[Annotated[int, Field(ge=1, le=10)]]
    unit: NotRequired[Literal["c", "f"]]


@tool(side_effects="none")
def get_weather(
    city: str, days: Annotated[int, Field(ge=1, le=10)] = 1, unit: Literal["c", "f"] = "c"
) -> str:
    return city


declared: Tool[..., Any] = Tool(
    from_openai(
        {"type": "function", "function": {"name": "get_weather", "parameters": get_weather.spec.input_schema}}
    )
)
floor = TypeAdapter(WeatherArgs)
good = ToolCall(id="c1", name="get_weather", arguments={"city": "Lisbon", "days": 3, "unit": "c"})
bad = ToolCall(id="c1", name="get_weather", arguments={"days": "3", "unit": "kelvin"})

floor_us = per_call_us(lambda: floor.validate_python(good.arguments))
cases = [
    ("floor: TypeAdapter(TypedDict).validate_python", floor_us),
    ("tether: @tool function, valid call", per_call_us(lambda: get_weather.validate_call(good))),
    ("tether: declared tool (OpenAI JSON), valid call", per_call_us(lambda: declared.validate_call(good))),
    (
        "tether: refused call (every problem + coercion)",
        per_call_us(lambda: declared.validate_call(bad), number=2000),
    ),
]
print(row("what", "µs per call", "x floor"))
print(row("---", "---:", "---:"))
for label, us in cases:
    print(row(label, f"{us:.2f}", f"{us / floor_us:.1f}"))
