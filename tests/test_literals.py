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


@pytest.mark.parametrize(
    ("text", "value", "kinds"),
    [
        ('{"html": "<a href="x">go</a>"}', {"html": '<a href="x">go</a>'}, ["unescaped_quote"]),
        ("{'text': 'don't'}", {"text": "don't"}, ["single_quotes", "unescaped_quote"]),
        ('{"city": New York, "n": 1}', {"city": "New York", "n": 1}, ["unquoted_string"]),
        (
            '{"day": 2024-01-15, "id": 57eeeeb1-450b}',
            {"day": "2024-01-15", "id": "57eeeeb1-450b"},
            ["unquoted_string"],
        ),
        (
            '{"a": "New York, "b": 1}',
            {"a": "New York", "b": 1},
            ["missing_quote", "missing_comma", "unescaped_quote"],
        ),
        ('{"path": "/tmp/x}', {"path": "/tmp/x"}, ["unterminated_string"]),
        ('{"xy": (1, 2), "one": (1)}', {"xy": [1, 2], "one": 1}, ["python_literal"]),
        ("{'a', 'b'}", ["a", "b"], ["single_quotes", "python_literal"]),
        ("[1, 2, ...]", [1, 2], ["ellipsis"]),
        ('["k": "v"]', [{"k": "v"}], ["missing_braces"]),
        ('{"a": TRUE, "b": Null}', {"a": True, "b": None}, ["literal_case"]),
        ('{"a": 1, NOTE "b": 2}', {"a": 1, "b": 2}, ["stray_text"]),
        ("{\u201ckey\u201d: 1}", {"key": 1}, ["smart_quotes"]),
        ('Here it is:\n```json\n{"a": 1}\n```', {"a": 1}, ["stray_text", "code_fence"]),
        ('{"a": "b"```', {"a": "b"}, ["unbalanced_brackets", "stray_text"]),
        ('{"a": t', {"a": True}, ["unbalanced_brackets"]),
    ],
)
def test_what_models_get_wrong_inside_a_container_is_repaired(
    text: str, value: object, kinds: list[str]
) -> None:
    result = loads(text)
    assert result.value == value
    assert sorted({r.kind for r in result.repairs}) == sorted(kinds)


@pytest.mark.parametrize(
    "text",
    [
        '{"code": "print(a["k"])"}',  # a closer inside the string, no delimiter after it
        '{"t": "he said "hi", then left"}',  # a comma not followed by a key
    ],
)
def test_inner_quotes_followed_by_closers_or_commas_stay_in_the_string(text: str) -> None:
    result = loads(text)
    assert (result.ok, len(result.value)) == (True, 1)
    assert '"' in next(iter(result.value.values()))


def test_repairs_that_guess_at_structure_stay_inside_containers() -> None:
    assert loads("Sure thing").error == "unexpected word 'Sure'"
    assert parse_value("f(a=x)", 2, flavor="python").error is not None
    assert parse_value('{"a": "x" y}', flavor="js").error is not None
