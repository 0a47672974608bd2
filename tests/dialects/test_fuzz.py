"""Fuzz tests: random and mutated model output never raises, streams to the same result, stays linear."""

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.dialects import ParseResult, dialect_names, parse, stream_parser

TEXT_DIALECTS = [
    d for d in dialect_names() if d not in ("openai", "anthropic", "gemini") and not d.startswith("test_")
]
NATIVE = ["openai", "anthropic", "gemini"]
CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"

PIECES = [
    "<tool_call>", "</tool_call>", "<think>", "</think>", "{", "}", "[", "]", "(", ")", '"', "'", "`", ",", ":",
    "=", "\\", "\n", " ", "name", '"name": ', '"arguments": ', "f(", "a=1", "```tool\n", "```yaml\n", "```",
    "type: tool_call\n", "[TOOL_CALLS]", "[ARGS]", "<function=f>", "<parameter=a>", "</parameter>",
    "</function>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<|tool_call>", "<tool_call|>",
    '<|"|>', "call:", "<|channel|>", "<|message|>", "<|call|>", "to=functions.f", "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<function_calls>", "</function_calls>",
    '{"toolCalls": [', "True", "null", "undefined", "1e5", "-", "é", "\x00", "\ud800",
    "functools", "func", "f", "of", "function call<|role_sep|>", "function call", "<|function_call|>", ">>>",
    "<|tool_call|>", "<|", "[TOOL", "[THINK]",
]  # fmt: skip

texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=5), max_size=40).map("".join)


def _stream(text: str, dialect: str, cuts: list[int]) -> ParseResult:
    p = stream_parser(dialect)
    last = 0
    for cut in sorted({c % (len(text) + 1) for c in cuts}):
        p.feed(text[last:cut])
        last = cut
    p.feed(text[last:])
    p.close()
    return p.result


def _no_internal_errors(result: ParseResult) -> None:
    assert not [e for e in result.errors if e.message.startswith("internal parser error")]


@pytest.mark.parametrize("dialect", TEXT_DIALECTS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_random_output_never_raises_and_streams_equal(dialect: str, text: str, cuts: list[int]) -> None:
    whole = parse(text, dialect)
    _no_internal_errors(whole)
    assert _stream(text, dialect, cuts) == whole


@pytest.mark.parametrize("dialect", NATIVE)
@settings(max_examples=40, deadline=None)
@given(text=texts)
def test_random_provider_json_never_raises(dialect: str, text: str) -> None:
    _no_internal_errors(parse(text, dialect))


def _corpus_texts(limit_per_file: int = 15) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(CORPORA.glob("*.jsonl")):
        if path.stem not in TEXT_DIALECTS:
            continue
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f):
                if n >= limit_per_file:
                    break
                out.append((path.stem, json.loads(line)["text"]))
    return out


CORPUS = _corpus_texts() if CORPORA.is_dir() else []


@settings(max_examples=300, deadline=None)
@given(
    case=st.sampled_from(CORPUS or [("hermes", "")]),
    cut=st.integers(min_value=0, max_value=500),
    length=st.integers(min_value=0, max_value=20),
    insert=st.sampled_from(PIECES),
    cuts=st.lists(st.integers(min_value=0, max_value=500), max_size=6),
)
def test_mutated_corpus_output_never_raises_and_streams_equal(
    corpora_dir: Path, case: tuple[str, str], cut: int, length: int, insert: str, cuts: list[int]
) -> None:
    dialect, text = case
    cut %= len(text) + 1
    mutated = text[:cut] + insert + text[cut + length :]
    for d in (dialect, "auto"):
        whole = parse(mutated, d)
        _no_internal_errors(whole)
        assert _stream(mutated, d, cuts) == whole


ADVERSARIAL: list[Callable[[int], str]] = [
    lambda n: "[" * n,
    lambda n: "{" * n,
    lambda n: "(" * n,
    lambda n: '"' * n,
    lambda n: "<tool_call>" * (n // 11),
    lambda n: "<tool_call>{" * (n // 12),
    lambda n: "[f(" * (n // 3),
    lambda n: "```" * (n // 3),
    lambda n: "<arg_key>a" * (n // 10),
    lambda n: "<function=f><parameter=a>" * (n // 25),
    lambda n: "[TOOL_CALLS]" * (n // 12),
    lambda n: '[{"name": "f", "arguments": {}},' * (n // 32),
    lambda n: "<|tool_call>call:f{a:" * (n // 21),
    lambda n: "a" * n,
]


def _best_time(text: str, dialect: str) -> float:
    # CPU time of this thread: other processes on a loaded machine do not count against the parser
    best = float("inf")
    for _ in range(3):
        t = time.thread_time()
        parse(text, dialect)
        best = min(best, time.thread_time() - t)
    return best


@pytest.mark.parametrize("dialect", [*TEXT_DIALECTS])
def test_parsing_time_grows_linearly_on_adversarial_output(dialect: str) -> None:
    for make in ADVERSARIAL:
        # 16x the text: linear work takes ~16x the time, quadratic ~256x. The bound sits far from both, so
        # a loaded machine's noise cannot fail a linear parser and cannot pass a quadratic one.
        small, large = make(2_000), make(32_000)
        ratio = float("inf")
        for _ in range(3):
            ratio = min(ratio, _best_time(large, dialect) / max(_best_time(small, dialect), 1e-4))
            if ratio < 64:
                break
        assert ratio < 64, f"{dialect} on {large[:24]!r}...: 16x the text took {ratio:.1f}x the time"
