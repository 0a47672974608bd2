"""The caller's face of a parser and the dialect's: callers feed, close and read; only dialects emit."""

import random
import time

import pytest

from tether.dialects import (
    Emitter,
    NativeParser,
    RegionParser,
    ToolIndex,
    dialect_names,
    parse,
    stream_parser,
)


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_caller_cannot_reach_the_methods_dialects_write_with(dialect: str) -> None:
    parser = stream_parser(dialect)
    assert not {"text", "reasoning", "started", "delta", "call", "fail", "new_id"} & set(dir(parser))
    assert {"feed", "close", "result", "partial_calls"} <= set(dir(parser))


CALLERS = {
    "feed", "feed_event", "close", "result", "partial_calls", "first_call_at", "reasoned", "busy_since",
    "plain_text_until", "open_reasoning", "dialect", "tools",
}  # fmt: skip
REGION_HOOKS = {
    "on_region", "on_progress", "on_marker", "after_text", "openers", "active_openers", "use_openers",
    "between_regions",
}  # fmt: skip
"""A `RegionParser`'s hooks, public for its subclasses (docs/dialects.md), so a caller holding the parser can
still call them (`after_text("x")` adds content): issue 13 leaves them to a rename (`_on_region`, ...) that
the region machinery's owners make."""


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_parser_shows_a_caller_its_methods_and_a_region_parser_only_its_documented_hooks(
    dialect: str,
) -> None:
    # regression: a native parser's `apply`, `pending`, `finish`, ... let any caller add or complete calls
    parser = stream_parser(dialect)
    beyond = {name for name in dir(parser) if not name.startswith("_")} - CALLERS
    if isinstance(parser, RegionParser):
        assert beyond <= REGION_HOOKS
    elif isinstance(parser, NativeParser):
        assert beyond == {"read"}  # the dialect's reading of its provider's JSON: a pure function
    else:
        assert beyond <= {"chosen"}  # auto: the dialect it committed to


def test_a_model_repeating_one_id_gets_numbered_ids() -> None:
    text = "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>" * 3
    assert [c.id for c in parse(text, "kimi_k2").calls] == [
        "functions.f:0",
        "functions.f:0_2",
        "functions.f:0_3",
    ]


def test_thousands_of_calls_sharing_one_id_take_linear_time() -> None:
    # regression: each repeat tried x_2, x_3, ... from the start, so n repeats cost n²/2 set lookups
    # (20,000 repeats: ~200 million, minutes); now a repeat resumes where the last one stopped
    emit = Emitter("hermes", ToolIndex())
    start = time.process_time()
    ids = [emit.new_id("x") for _ in range(20_000)]
    assert time.process_time() - start < 2.0
    assert (ids[:3], ids[-1], len(set(ids))) == (["x", "x_2", "x_3"], "x_20000", 20_000)


def test_a_free_numbered_id_is_still_skipped_when_the_model_took_it() -> None:
    emit = Emitter("hermes", ToolIndex())
    assert [emit.new_id(w) for w in ("x", "x_2", "x", "x", None, "call_1", None)] == [
        "x", "x_2", "x_3", "x_4", "call_0", "call_1", "call_2",
    ]  # fmt: skip


def _ids_as_a_set_would_give(wanted: list[str | None]) -> list[str]:
    """What `new_id` promises, kept naively: `wanted` when free, else its first free `_n`; else `call_<n>`."""
    given: list[str] = []
    n = 0
    for w in wanted:
        if w:
            call_id, k = w, 2
            while call_id in given:
                call_id, k = f"{w}_{k}", k + 1
        else:
            while f"call_{n}" in given:
                n += 1
            call_id = f"call_{n}"
            n += 1
        given.append(call_id)
    return given


@pytest.mark.parametrize("seed", range(40))
def test_the_first_id_of_an_output_needs_no_set_and_the_ids_stay_unique(seed: int) -> None:
    """The first id an emitter gives out is kept without a set (made with the second): the ids equal those a
    set from the start gives, whichever comes first (a wanted id, none, one that a later `call_<n>` takes)."""
    rng = random.Random(seed)
    wanted = [rng.choice([None, "", "x", "x_2", "call_0", "call_1", "c"]) for _ in range(rng.randint(1, 6))]
    emit = Emitter("hermes", ToolIndex())
    assert [emit.new_id(w) for w in wanted] == _ids_as_a_set_would_give(wanted), wanted


@pytest.mark.parametrize("span", [None, (3, 40)])
@pytest.mark.parametrize("text", ['{"a": 1}', ""])
def test_a_call_stated_whole_equals_one_announced_then_completed(
    span: tuple[int, int] | None, text: str
) -> None:
    """`stated` is the shorter way for `started`, `delta`, `call(..., announced=True)`: same events, call and
    first position, with a span (a text dialect's call) or without (a provider's)."""

    def emitter() -> Emitter:
        emit = Emitter("hermes", ToolIndex())
        emit.fed = 50
        return emit

    short, steps = emitter(), emitter()
    short.stated(short.new_id(), "add", text, {"a": 1}, span)
    call_id = steps.new_id()
    steps.started(call_id, "add")
    steps.delta(call_id, text)
    steps.call("add", {"a": 1}, span, (), call_id=call_id, announced=True)
    assert short.events == steps.events
    assert short.result() == steps.result()
    assert short.first_call_at == steps.first_call_at == (50 if span is None else 3)
