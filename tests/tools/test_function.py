"""`@tool`: schemas from type hints and docstrings, typed values for the function, clear errors."""

import dataclasses
from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, field_validator
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from tether.exceptions import UserError
from tether.tools import Problem, Tool, ToolContext, tool
from tether.types import RateLimit, SandboxPolicy, ToolCall, ToolExample


class Unit(Enum):
    CELSIUS = "c"
    FAHRENHEIT = "f"


class Place(BaseModel):
    city: str
    country: str | None = None

    @field_validator("city")
    @classmethod
    def city_is_titled(cls, value: str) -> str:
        if not value[:1].isupper():
            raise ValueError("city names start with a capital letter")
        return value


class Window(TypedDict):
    start: str
    end: str


@dataclasses.dataclass
class Point:
    x: float
    y: float


def call(t: Tool[..., Any], **arguments: Any) -> ToolCall:
    return ToolCall(id="c1", name=t.name, arguments=arguments)


def test_schema_comes_from_type_hints_and_a_google_docstring() -> None:
    @tool(side_effects="none")
    def forecast(
        place: Place,
        days: Annotated[int, Field(ge=1, le=10)] = 1,
        unit: Unit = Unit.CELSIUS,
        mode: Literal["brief", "full"] = "brief",
        window: Window | None = None,
        at: Point | None = None,
    ) -> dict[str, float]:
        """Forecast the weather.

        Longer text.

        Args:
            place: Where to forecast.
            days: How many days.
        """
        return {}

    schema = forecast.spec.input_schema
    assert forecast.spec.description == "Forecast the weather.\n\nLonger text."
    assert schema["required"] == ["place"]
    assert list(schema["properties"]) == ["place", "days", "unit", "mode", "window", "at"]
    assert schema["properties"]["place"] == {"$ref": "#/$defs/Place", "description": "Where to forecast."}
    assert schema["properties"]["days"] == {
        "type": "integer", "minimum": 1, "maximum": 10, "default": 1, "description": "How many days.",
    }  # fmt: skip
    assert schema["properties"]["mode"] == {"enum": ["brief", "full"], "type": "string", "default": "brief"}
    assert schema["$defs"]["Unit"]["enum"] == ["c", "f"]
    assert set(schema["$defs"]) == {"Place", "Unit", "Window", "Point"}
    assert forecast.spec.output_schema == {"type": "object", "additionalProperties": {"type": "number"}}
    assert forecast.spec.side_effects == "none"


@pytest.mark.parametrize(
    "docstring",
    [
        "Sum.\n\nArgs:\n    a: The first.\n    b: The second.\n",
        "Sum.\n\nParameters\n----------\na : int\n    The first.\nb : int\n    The second.\n",
        "Sum.\n\n:param a: The first.\n:param b: The second.\n",
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_parameter_descriptions_come_from_every_docstring_style(docstring: str) -> None:
    def add(a: int, b: int) -> int:
        return a + b

    add.__doc__ = docstring
    spec = tool(add).spec
    assert spec.description == "Sum."
    assert spec.input_schema["properties"]["a"]["description"] == "The first."
    assert spec.input_schema["properties"]["b"]["description"] == "The second."


def test_a_tool_is_still_the_function() -> None:
    @tool
    def double(n: int) -> int:
        return 2 * n

    assert double(21) == 42
    assert double.spec.side_effects == "mutating"  # the safe default when undeclared


def test_typed_values_reach_the_function() -> None:
    @tool
    def locate(place: Place, unit: Unit = Unit.CELSIUS, at: Point | None = None) -> str:
        return f"{place.city}/{unit.value}/{at}"

    checked = locate.validate_call(call(locate, place={"city": "Oslo"}, unit="f", at={"x": 1, "y": "2"}))
    assert checked.ok
    kwargs = locate.call_arguments(checked)
    assert kwargs == {"place": Place(city="Oslo"), "unit": Unit.FAHRENHEIT, "at": Point(1.0, 2.0)}
    assert locate.function is not None
    assert locate.function(**kwargs) == "Oslo/f/Point(x=1.0, y=2.0)"


def test_custom_validators_report_problems_like_schema_checks() -> None:
    @tool
    def visit(place: Place) -> None:
        return None

    checked = visit.validate_call(call(visit, place={"city": "oslo"}))
    assert checked.problems == [
        Problem("$.place.city", "Value error, city names start with a capital letter", "value_error")
    ]


def test_a_tool_context_parameter_is_injected_not_described() -> None:
    @tool
    async def whoami(greeting: str, ctx: ToolContext) -> str:
        return f"{greeting} {ctx.principal}"

    assert list(whoami.spec.input_schema["properties"]) == ["greeting"]
    assert whoami.context_parameter == "ctx"
    assert whoami.is_async
    checked = whoami.validate_call(call(whoami, greeting="hi"))
    context = ToolContext(call=checked.call, principal="ada")
    assert whoami.call_arguments(checked, context) == {"greeting": "hi", "ctx": context}


def test_parameters_named_like_pydantic_attributes_work() -> None:
    @tool
    def dump(json: str, schema: str, copy: bool = False) -> str:
        return json + schema

    checked = dump.validate_call(call(dump, json="a", schema="b"))
    assert dump.call_arguments(checked) == {"json": "a", "schema": "b"}  # `copy` keeps the function's default
    assert dump(**dump.call_arguments(checked)) == "ab"


def test_every_spec_option_is_carried() -> None:
    @tool(
        name="fs.read", description="Read.", category="fs", side_effects="none", requires_why=True,
        scopes=["files.read"], sandbox=SandboxPolicy(timeout_ms=500), examples=[{"input": {"path": "a"}}],
        priority=3, rate_limit=RateLimit(calls=5, per_seconds=1), sequential=True, idempotency_fields=["path"],
    )  # fmt: skip
    def read(path: str) -> str:
        return path

    spec = read.spec
    assert (spec.name, spec.category, spec.requires_why, spec.priority, spec.sequential) == (
        "fs.read", "fs", True, 3, True,
    )  # fmt: skip
    assert spec.examples == (ToolExample(input={"path": "a"}),)
    assert spec.idempotency_fields == ("path",)


def varargs(*names: str) -> None:
    return None


def one(a: int) -> int:
    return a


@pytest.mark.parametrize(
    ("function", "options", "message"),
    [
        (varargs, {}, r"\*args cannot be described"),
        (one, {"name": "bad name!"}, "'bad name!' is not a valid tool name"),
        (one, {"idempotency_fields": ["nope"]}, "not parameters"),
        (one, {"side_effects": "sometimes"}, "side_effects"),
    ],
    ids=["varargs", "bad-name", "idempotency-field", "side-effects"],
)
def test_bad_definitions_are_user_errors(function: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        tool(**options)(function)


def test_positional_only_and_unresolvable_hints_are_user_errors() -> None:
    def positional(a: int, /) -> int:
        return a

    with pytest.raises(UserError, match="positional-only"):
        tool(positional)

    namespace: dict[str, Any] = {}
    exec("def unresolved(a: 'Missing') -> None: ...", namespace)  # a hint naming a type that does not exist
    with pytest.raises(UserError, match="cannot be resolved"):
        tool(namespace["unresolved"])


@tool
def log_event(event: str, **fields: int) -> str:
    return f"{event} {fields}"


def test_a_kwargs_function_takes_other_names_of_its_type() -> None:
    assert log_event.spec.input_schema == {
        "type": "object",
        "properties": {"event": {"type": "string"}},
        "required": ["event"],
        "additionalProperties": {"type": "integer"},
    }
    checked = log_event.validate_call(
        ToolCall(id="c1", name="log_event", arguments={"event": "sale", "units": 3})
    )
    assert log_event.function(**log_event.call_arguments(checked)) == "sale {'units': 3}"  # pyright: ignore[reportOptionalCall]
    wrong = log_event.validate_call(
        ToolCall(id="c2", name="log_event", arguments={"event": "sale", "units": "a"})
    )
    assert [str(p) for p in wrong.problems] == ['$.units: must be an integer; got string "a"']


class Route(BaseModel):
    name: str
    via: "list[Route]" = []


def test_an_unknown_field_inside_a_model_argument_is_refused_not_dropped() -> None:
    @tool(side_effects="none")
    def forecast(place: Place, stops: list[Place] | None = None) -> str:
        """Forecast."""
        return place.city

    arguments = {"place": {"city": "Oslo", "cuntry": "SE"}, "stops": [{"city": "Bergen", "x": 1}], "why": "w"}
    checked = forecast.validate_call(ToolCall(id="1", name="forecast", arguments=arguments))
    assert [str(p) for p in checked.problems] == [
        "$.place.cuntry: unknown field; did you mean `country`?",
        "$.stops[0].x: unknown field; it takes `city`, `country`",
    ]
    fine = forecast.validate_call(ToolCall(id="1", name="forecast", arguments={"place": {"city": "Oslo"}}))
    assert fine.problems == ()


def test_a_recursive_model_argument_is_checked_without_looping() -> None:
    @tool(side_effects="none")
    def plan(route: Route) -> str:
        """Plan."""
        return route.name

    arguments: dict[str, Any] = {"route": {"name": "a", "via": [{"name": "b", "vai": []}]}}
    checked = plan.validate_call(ToolCall(id="1", name="plan", arguments=arguments))
    assert [str(p) for p in checked.problems] == ["$.route.via[0].vai: unknown field; did you mean `via`?"]
