import math

import pytest

from tether._literals import MAX_DEPTH, loads, parse_value
from tether.types import Repair


def test_strict_json_needs_no_repair() -> None:
    result = loads('{"a": [1, 2.5, -3e2, true, false, null, "x\\u00e9\\n"]}')
    assert (result.value, result.repairs, result.error) == (
        {"a": [1, 2.5, -300.0, True, False, None, "xé\n"]},
        [],
        None,
    )


@pytest.mark.parametrize(
    ("text", "value", "kinds"),
    [
        ("{'a': 'b'}", {"a": "b"}, ["single_quotes"]),
        ('{a: 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}, ["unquoted_key", "trailing_comma"]),
        ('{"a": True, "b": None}', {"a": True, "b": None}, ["python_literal"]),
        ('{"a": "line\nbreak"}', {"a": "line\nbreak"}, ["raw_newline"]),
        ('{"a": [1, {"b": "c', {"a": [1, {"b": "c"}]}, ["unterminated_string", "unbalanced_brackets"]),
        ('```json\n{"a": 1}\n```', {"a": 1}, ["code_fence"]),
        ('Sure! {"a": 1} hope that helps', {"a": 1}, ["stray_text"]),
        ('{"a": 1 "b": 2}', {"a": 1, "b": 2}, ["missing_comma"]),
        ('{"a": 1 /* note */}', {"a": 1}, ["comments"]),
    ],
)
def test_repairs_are_made_and_recorded(text: str, value: object, kinds: list[str]) -> None:
    result = loads(text)
    assert result.value == value
    assert sorted({r.kind for r in result.repairs}) == sorted(kinds)


def test_a_repair_names_the_argument_it_concerns() -> None:
    assert loads('{"days": True}').repairs == [
        Repair(kind="python_literal", message="read Python literal True", path="$.days")
    ]


def test_flavors_treat_their_own_syntax_as_native() -> None:
    assert parse_value("{a: `x`, b: undefined,}", flavor="js").repairs == []
    py = parse_value("{'a': (1, 2), 'b': '''x'''}", flavor="python")
    assert (py.value, py.repairs) == ({"a": [1, 2], "b": "x"}, [])
    assert math.isnan(loads("NaN").value)


def test_garbage_is_an_error_not_an_exception() -> None:
    result = loads("@@@")
    assert (result.ok, result.error) == (False, "unexpected character '@'")


def test_deep_nesting_is_refused_without_recursion_errors() -> None:
    result = loads("[" * (MAX_DEPTH * 10))
    assert result.error == "nesting too deep"
