"""`storable`: whatever a tool or a model produced becomes JSON every journal can hold."""

from __future__ import annotations

import json
from typing import Any

from tether.store.internal import storable, storable_text


def test_values_with_nothing_to_replace_are_returned_as_they_are() -> None:
    value = {"ok": True, "data": {"city": "Zürich", "emoji": "😀", "n": [1, 2.5, None]}}
    assert storable(value) is value


def test_lone_surrogates_and_nuls_become_replacement_characters_in_strings_and_keys() -> None:
    assert storable({"k\x00": ["a\ud800b", "pair \ud83d\ude00 kept"]}) == {
        "k\ufffd": ["a\ufffdb", "pair 😀 kept"]
    }
    assert storable_text("no\x00 nul") == "no\ufffd nul"


def test_non_finite_numbers_become_null_and_huge_integers_a_description() -> None:
    assert storable([float("nan"), float("inf"), -float("inf"), 1.5]) == [None, None, None, 1.5]
    assert storable({"n": 10**5000}) == {"n": "(an integer of about 5001 digits: too long to write)"}


def test_nesting_too_deep_for_json_is_cut_off() -> None:
    deep: list[Any] = []
    innermost = deep
    for _ in range(5000):
        innermost.append([])
        innermost = innermost[0]
    text = json.dumps(storable(deep))
    assert text.endswith('"(nested more than 128 levels deep: left out)"' + "]" * 128)
