"""One parser of call expressions, for dialects (model output, repaired) and seed 003 examples (strict)."""

import ast
from pathlib import Path

import tether
from tether._syntax import parse_call, parse_call_list
from tether.dialects import parse
from tether.tools import specs_from_typescript

TS = """/**
 * Weather for a city.
 * @example forecast("Oslo", {days: 2, units: ['c',],})
 */
function forecast(city: string, options: object): string;"""


def test_a_js_call_reads_the_same_in_a_fenced_block_and_a_seed_003_example() -> None:
    (spec,) = specs_from_typescript(TS, min_examples=1)
    fenced = parse("```tool\nreturn forecast(\"Oslo\", {days: 2, units: ['c',],});\n```", "fenced", [spec])
    assert (
        fenced.calls[0].arguments
        == spec.examples[0].input
        == {
            "city": "Oslo",
            "options": {"days": 2, "units": ["c"]},
        }
    )


def test_python_keyword_arguments_and_a_list_of_calls() -> None:
    calls, error, _ = parse_call_list("[f(a=1, b='x'), g()]")
    assert (error, [(c.name, c.args, c.kwargs) for c in calls]) == (
        None,
        [("f", [], {"a": 1, "b": "x"}), ("g", [], {})],
    )


def test_a_cut_off_call_is_repaired_not_refused() -> None:
    call = parse_call("f(1, 2", 0, 6, "js")
    assert (call.error, call.args, [r.kind for r in call.repairs]) == (None, [1, 2], ["unbalanced_brackets"])


def test_tools_and_dialects_read_call_syntax_with_this_parser_and_no_other() -> None:
    # regression (issue 13): tools/_jscall.py and dialects/_pycall.py were two parsers of call expressions
    source = Path(tether.__file__).parent
    users = {
        path.relative_to(source).as_posix()
        for path in source.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == "tether._syntax"
    }
    assert {"tools/_typescript.py", "dialects/fenced.py", "dialects/_bodies.py"} <= users
    defining = {
        path.relative_to(source).as_posix()
        for path in source.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name in ("parse_call", "parse_call_list")
    }
    assert defining == {"_syntax.py"}
