"""Redaction by schema: `format: password` and `x-secret: true`, wherever they are nested."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, SecretStr

from tether.tools import REDACTED, redact


class Credentials(BaseModel):
    user: str
    password: SecretStr


class Request(BaseModel):
    credentials: Credentials
    tokens: list[SecretStr]
    note: str


def test_secret_values_are_replaced_wherever_the_schema_marks_them() -> None:
    schema = Request.model_json_schema()  # nested models become $defs and $ref
    value = {"credentials": {"user": "ada", "password": "hunter2"}, "tokens": ["a", "b"], "note": "hi"}
    assert redact(value, schema) == {
        "credentials": {"user": "ada", "password": REDACTED},
        "tokens": [REDACTED, REDACTED],
        "note": "hi",
    }
    assert value["credentials"] == {"user": "ada", "password": "hunter2"}  # the input is not modified


def test_x_secret_additional_properties_and_combinators() -> None:
    schema = {
        "type": "object",
        "properties": {"api_key": {"type": "string", "x-secret": True}},
        "additionalProperties": {"anyOf": [{"type": "string", "x-secret": True}, {"type": "null"}]},
    }
    assert redact({"api_key": "k", "other": "v", "none": None}, schema) == {
        "api_key": REDACTED,
        "other": REDACTED,
        "none": None,
    }


def test_without_a_schema_nothing_is_redacted() -> None:
    assert redact({"password": "hunter2"}, None) == {"password": "hunter2"}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "password"},
        {"type": "object", "properties": {"a": {"x-secret": True}}},
        {"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/s"}], "$defs": {"s": {"format": "password"}}},
        {"type": "array", "items": {"x-secret": True}},
    ],
)
def test_a_schema_that_marks_anything_secret_gives_a_dict_back_anew(schema: dict[str, Any]) -> None:
    # what the executor asks once per tool (is there anything to redact?): the same object back iff nothing
    probe: dict[str, Any] = {}
    assert redact(probe, schema) is not probe


@pytest.mark.parametrize(
    "schema", [{"type": "integer"}, {"type": "object", "properties": {"a": {}}}, {}, None]
)
def test_a_schema_that_marks_nothing_secret_gives_the_value_itself_back(
    schema: dict[str, Any] | None,
) -> None:
    probe: dict[str, Any] = {"a": 1}
    assert redact(probe, schema) is probe
