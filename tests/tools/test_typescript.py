"""TypeScript-like signatures with JSDoc (seed 003)."""

import pytest

from tether.exceptions import UserError
from tether.tools import specs_from_typescript
from tether.types import ToolExample

WGET = """
/**
 * Downloads content from a URI with timeout. Returns the content as a string.
 * @param uri The URI to fetch.
 * @param timeoutMs Give up after this many milliseconds.
 * @returns The body, or an error message.
 * @sideEffects none
 * @example wget("https://example.com", 5000)
 * @example wget('https://example.org/data.json', 1000) => "{\\"a\\": 1}"
 * @example wget(`http://localhost:8080/`, 250,)
 */
wget(string uri, number timeoutMs): string
"""


def test_the_seeds_wget_signature() -> None:
    (spec,) = specs_from_typescript(WGET)
    assert spec.name == "wget"
    assert spec.description == "Downloads content from a URI with timeout. Returns the content as a string."
    assert spec.input_schema == {
        "type": "object",
        "properties": {
            "uri": {"type": "string", "description": "The URI to fetch."},
            "timeoutMs": {"type": "number", "description": "Give up after this many milliseconds."},
        },
        "required": ["uri", "timeoutMs"],
    }
    assert spec.output_schema == {"type": "string", "description": "The body, or an error message."}
    assert spec.side_effects == "none"
    assert spec.examples == (
        ToolExample(input={"uri": "https://example.com", "timeoutMs": 5000}),
        ToolExample(input={"uri": "https://example.org/data.json", "timeoutMs": 1000}, output='{"a": 1}'),
        ToolExample(input={"uri": "http://localhost:8080/", "timeoutMs": 250}),
    )


def test_typescript_order_optional_parameters_and_rich_types() -> None:
    (spec,) = specs_from_typescript(
        """
        /** Search.
         * @param {string} query - What to look for.
         * @param [limit] At most this many.
         * @category search
         * @requiresWhy
         * @scope docs.read
         * @example search("a")
         * @example search("b", 3) => [{id: 'x', score: 0.5}]
         * @example search({query: "c", limit: 1})
         */
        export async function search(query: string, limit?: integer,
            filter?: { kind: 'doc' | 'faq'; tags?: Array<string>; meta: Record<string, number> }
        ): Promise<{ id: string; score: number }[]>;
        """
    )
    props = spec.input_schema["properties"]
    assert spec.input_schema["required"] == ["query"]
    assert props["query"] == {"type": "string", "description": "What to look for."}
    assert props["limit"] == {"type": "integer", "description": "At most this many."}
    assert props["filter"] == {
        "type": "object",
        "properties": {
            "kind": {"enum": ["doc", "faq"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "object", "additionalProperties": {"type": "number"}},
        },
        "required": ["kind", "meta"],
    }
    assert spec.output_schema is not None
    assert spec.output_schema["type"] == "array"
    assert (spec.category, spec.requires_why, spec.scopes) == ("search", True, ("docs.read",))
    assert spec.examples[1] == ToolExample(
        input={"query": "b", "limit": 3}, output=[{"id": "x", "score": 0.5}]
    )


def test_several_signatures_in_one_file() -> None:
    text = WGET + WGET.replace("wget", "fetch")
    assert [s.name for s in specs_from_typescript(text)] == ["wget", "fetch"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("/** @example f(1)\n@example f(2) */ f(number a): number", "at least 3"),
        ("f(number a", "ends in the middle"),
        ("f(widget a): number", "unknown type 'widget'"),
        ("/** @param b nope */ f(number a)", r"@param for \['b'\]"),
        ("f(number a, string a)", "twice"),
        ("f(number a) # x", "unexpected character"),
        ("/** @example g(1)\n@example g(2)\n@example g(3) */ f(number a)", "calls 'g', not 'f'"),
        ("/** @example f(1, 2)\n@example f(2)\n@example f(3) */ f(number a)", "passes 2 arguments"),
        ("/** @example f(1\n@example f(2)\n@example f(3) */ f(number a)", "is not a call"),
        ("// nothing here", "no tool signatures"),
    ],
)
def test_bad_definitions_name_the_line_and_the_fix(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        specs_from_typescript(text, min_examples=3 if "at least" in message else 0)
