import pytest

from tether.builtin._diff import apply_unified_diff
from tether.exceptions import ToolError


def test_hunks_apply_in_order_with_shifted_line_numbers() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 21))
    diff = (
        "--- a\n+++ b\n"
        "@@ -2,2 +2,3 @@\n line 2\n+inserted\n line 3\n"
        "@@ -10,3 +11,2 @@\n line 10\n-line 11\n line 12\n"
    )
    patched, hunks = apply_unified_diff(text, diff)
    assert hunks == 2
    lines = patched.splitlines()
    assert lines[2] == "inserted"
    assert "line 11" not in lines
    assert patched.endswith("line 20\n")


def test_a_hunk_is_found_near_a_wrong_line_number() -> None:
    patched, _ = apply_unified_diff("a\nb\nc\nd\n", "@@ -1,2 +1,2 @@\n c\n-d\n+D\n")
    assert patched == "a\nb\nc\nD\n"


def test_a_pure_insertion_into_an_empty_file() -> None:
    assert apply_unified_diff("", "--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+hello\n+world\n") == (
        "hello\nworld\n",
        1,
    )


def test_text_without_hunks_is_invalid() -> None:
    with pytest.raises(ToolError) as caught:
        apply_unified_diff("a\n", "just replace a with b")
    assert caught.value.code == "INVALID_ARGS"
