"""Argument validation: every problem with its path, safe coercions recorded, unsafe ones refused."""

from typing import Any

import pytest

from tether.tools import Problem, Tool, describe_problems
from tether.types import Provenance, Repair, ToolCall, ToolSpec

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 2},
        "days": {"type": "integer", "minimum": 1, "maximum": 10},
        "ratio": {"type": "number"},
        "metric": {"type": "boolean"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "filters": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}},
        "points": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["city"],
    "additionalProperties": False,
}
TOOL: Tool[..., Any] = Tool(ToolSpec(name="forecast", input_schema=SCHEMA))


def check(arguments: dict[str, Any], *, why: str | None = None):
    return TOOL.validate_call(ToolCall(id="c1", name="forecast", arguments=arguments, why=why))


def test_a_valid_call_passes_unchanged() -> None:
    call = ToolCall(id="c1", name="forecast", arguments={"city": "Oslo", "days": 3})
    checked = TOOL.validate_call(call)
    assert checked.ok
    assert checked.call is call


def test_every_problem_is_listed_with_its_path() -> None:
    checked = check({"days": 50, "unit": "kelvin", "filters": {"tags": ["a", 3]}, "extra": 1})
    assert checked.problems == [
        Problem("$.city", "missing required argument", "required"),
        Problem("$.days", "must be <= 10; got 50", "maximum"),
        Problem(
            "$.extra",
            "unknown argument; this tool takes `city`, `days`, `filters`, `metric`, `points`, `ratio`, `unit`",
            "additionalProperties",
        ),
        Problem("$.filters.tags[1]", "must be a string; got integer 3", "type"),
        Problem("$.unit", 'must be one of "c", "f"; got "kelvin"', "enum"),
    ]
    assert describe_problems("forecast", checked.problems[:2]) == (
        "2 problems with the arguments of forecast: $.city: missing required argument; $.days: must be <= 10; got 50"
    )


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"days": "5"}, {"days": 5}),
        ({"days": " 7 "}, {"days": 7}),
        ({"ratio": "2.5"}, {"ratio": 2.5}),
        ({"ratio": "3"}, {"ratio": 3}),
        ({"metric": "TRUE"}, {"metric": True}),
        ({"filters": '{"tags": ["x"]}'}, {"filters": {"tags": ["x"]}}),
        ({"points": "[1, 2]"}, {"points": [1, 2]}),
        ({"points": ["1", "2"]}, {"points": [1, 2]}),
    ],
)
def test_safe_coercions_are_applied_and_recorded(given: dict[str, Any], expected: dict[str, Any]) -> None:
    checked = check({"city": "Oslo", **given})
    assert checked.ok, checked.problems
    assert checked.call.arguments == {"city": "Oslo", **expected}
    assert checked.call.repaired
    assert all(r.kind == "coerced" for r in checked.call.repairs)
    assert {r.path for r in checked.call.repairs} <= {f"$.{k}" for k in given} | {
        "$.points[0]",
        "$.points[1]",
    }


@pytest.mark.parametrize(
    "given",
    [
        {"days": "five"},
        {"days": "5.5"},
        {"days": 5.5},
        {"metric": "yes"},
        {"ratio": "nan"},
        {"filters": "[1]"},
    ],
)
def test_unsafe_coercions_stay_problems(given: dict[str, Any]) -> None:
    checked = check({"city": "Oslo", **given})
    assert not checked.ok
    assert not checked.call.repaired


def test_validation_never_mutates_the_models_arguments_nor_fills_defaults() -> None:
    arguments = {"city": "Oslo", "days": "2"}
    spec = ToolSpec(
        name="t", input_schema={"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}
    )
    assert Tool(spec).validate_call(ToolCall(id="1", name="t", arguments={})).call.arguments == {}
    checked = check(arguments)
    assert arguments == {"city": "Oslo", "days": "2"}
    assert checked.call.arguments == {"city": "Oslo", "days": 2}


def test_coercions_are_appended_to_the_dialects_own_repairs() -> None:
    earlier = Repair(kind="trailing_comma", message="removed a trailing comma")
    call = ToolCall(
        id="c1", name="forecast", arguments={"city": "Oslo", "days": "2"},
        provenance=Provenance(dialect="hermes", span=(0, 10), repairs=(earlier,)),
    )  # fmt: skip
    checked = TOOL.validate_call(call)
    assert checked.call.provenance == Provenance(
        dialect="hermes",
        span=(0, 10),
        repairs=(earlier, Repair(kind="coerced", message='"2" -> 2', path="$.days")),
    )


def test_why_moves_out_of_the_arguments_unless_the_tool_declares_it() -> None:
    checked = check({"city": "Oslo", "why": "Plan a trip"})
    assert checked.ok
    assert checked.call.arguments == {"city": "Oslo"}
    assert checked.call.why == "Plan a trip"
    own: Tool[..., Any] = Tool(
        ToolSpec(name="explain", input_schema={"type": "object", "properties": {"why": {"type": "string"}}})
    )
    kept = own.validate_call(ToolCall(id="1", name="explain", arguments={"why": "because"}))
    assert kept.call.arguments == {"why": "because"}
    assert kept.call.why is None


def test_a_why_given_beside_the_arguments_wins_over_one_inside() -> None:
    checked = check({"city": "Oslo", "why": "inside"}, why="outside")
    assert checked.call.why == "outside"
    assert checked.call.arguments == {"city": "Oslo"}


def test_arguments_that_are_not_json_values_are_problems_not_crashes() -> None:
    checked = check({"city": object()})
    assert not checked.ok
    assert checked.problems[0].path == "$.city"


def test_a_schema_allowing_other_names_takes_them() -> None:
    schema = {**SCHEMA, "additionalProperties": True}
    checked = Tool(ToolSpec(name="forecast", input_schema=schema)).validate_call(
        ToolCall(id="c1", name="forecast", arguments={"city": "Oslo", "extra": 1})
    )
    assert checked.ok


SECRET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "user": {"type": "string"},
        "pin": {"type": "integer", "x-secret": True},
        "password": {"type": "string", "format": "password", "minLength": 12},
        "vault": {"type": "object", "x-secret": True, "properties": {"code": {"type": "integer"}}},
    },
}
SECRET_TOOL: Tool[..., Any] = Tool(ToolSpec(name="unlock", input_schema=SECRET_SCHEMA))


def test_problems_and_coercions_never_show_a_value_the_schema_marks_secret() -> None:
    arguments = {"user": 7, "pin": "987654", "password": "hunter2", "vault": {"code": "x-4411"}}
    checked = SECRET_TOOL.validate_call(ToolCall(id="c1", name="unlock", arguments=arguments))
    assert [str(p) for p in checked.problems] == [
        "$.password: must be at least 12 characters long; got (a secret value, not shown)",
        "$.user: must be a string; got integer 7",
        "$.vault.code: must be an integer; got (a secret value, not shown)",
    ]
    assert checked.call.repairs == (
        Repair(kind="coerced", message="a secret string -> integer", path="$.pin"),
    )
    shown = " ".join([*(str(p) for p in checked.problems), *(r.message for r in checked.call.repairs)])
    assert not any(secret in shown for secret in ("987654", "hunter2", "4411"))


def test_an_object_the_schema_leaves_open_takes_any_field_at_any_depth() -> None:
    schema = {
        "type": "object",
        "properties": {
            "filters": {
                "type": "object",
                "properties": {"tag": {"type": "string"}},
                "additionalProperties": True,
            },
            "meta": {"type": "object"},
            "place": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    spec = ToolSpec(name="find", description="Find.", input_schema=schema, requires_why=False)
    call = ToolCall(
        id="1",
        name="find",
        arguments={"filters": {"tag": "a", "more": 1}, "meta": {"any": 2}, "place": {"x": 3}},
    )
    assert [str(p) for p in Tool(spec).validate_call(call).problems] == [
        "$.place.x: unknown field; it takes `city`"
    ]
