import json
from pathlib import Path

import pytest

from tether.dialects import CallCompleted, ReasoningDelta, TextDelta, parse, stream_parser

from .conftest import StreamCheck

CASES = [
    ('<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>', "hermes"),
    (
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
        "qwen3_coder_xml",
    ),
    ("<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call>", "glm45"),
    ('[TOOL_CALLS]f{"a": 1}', "mistral"),
    ('<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|>', "kimi_k2"),
    ("<|tool_call>call:f{a:1}<tool_call|>", "gemma4"),
    ("[f(a=1)]", "pythonic"),
    ('Sure: {"name": "f", "parameters": {"a": 1}}', "llama3_json"),
    ("```tool\nreturn f({a: 1});\n```", "fenced"),
    ("type: tool_call\ntool: f\nargs:\n  a: 1\n", "yaml"),
    ('{"toolCalls": [{"type": "f", "id": "x", "parameters": {"a": 1}}]}', "json_calls"),
    (
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": 1}}]<|END_ACTION|>',
        "command_r",
    ),
    ('<function=f>{"a": 1}</function>', "functionary_v3_1"),
    (
        'The forecast for you.\nAction: ```json\n[{"tool_name": "f", "parameters": {"a": 1}}]\n```',
        "command_r",
    ),
    ("Sure, here it is for you.\ntype: tool_call\ntool: f\nargs:\n  a: 1\n", "yaml"),
    ('Checking.>>>f\n{"a": 1}', "functionary_v3_2"),
    ('<TOOLCALL>[{"name": "f", "arguments": {"a": 1}}]</TOOLCALL>', "nemotron_v2"),
    (' functools[{"name": "f", "arguments": {"a": 1}}]', "firefunction_v2"),
    # every candidate waits by the time the word marker comes, so at some splits it spans two deltas
    ('Let me check the forecast for you. functools[{"name": "f", "arguments": {"a": 1}}]', "firefunction_v2"),
    (
        '<\uff5ctool_calls_begin\uff5c>function<\uff5ctool\u2581sep\uff5c>f\n```json\n{"a": 1}\n```'
        "<\uff5ctool\u2581call\u2581end\uff5c><\uff5ctool\u2581calls\u2581end\uff5c>",
        "deepseek_r1",
    ),
]


@pytest.mark.parametrize(("text", "dialect"), CASES)
def test_auto_detects_the_format(check_stream: StreamCheck, text: str, dialect: str) -> None:
    result = check_stream(text, "auto")
    assert result.dialect == dialect
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"a": 1})]


def test_plain_text_is_content() -> None:
    result = parse("<think>hm</think>Just text, no calls.", "auto")
    assert (result.content, result.reasoning, result.calls) == ("Just text, no calls.", "hm", [])


@pytest.mark.parametrize(
    "text",
    [
        "<|channel|>final<|message|>It is sunny in Lisbon.<|return|>",
        "<|start|>assistant<|channel|>final<|message|>It is sunny in Lisbon.<|end|>",
        "Forecast ready. <|channel|>final<|message|>It is sunny in Lisbon.<|return|>",
    ],
)
def test_harmony_without_a_call_is_read_as_harmony_not_raw_tokens(
    check_stream: StreamCheck, text: str
) -> None:
    result = check_stream(text, "auto")
    assert result.dialect == "harmony"
    assert result.content.endswith("It is sunny in Lisbon.")
    assert "<|" not in result.content


def test_auto_commits_while_streaming_once_the_first_call_is_certain() -> None:
    p = stream_parser("auto")
    p.feed('Checking. <tool_call>{"name": "f", "arguments": {}}</tool_call>')
    assert p.result.dialect == "hermes"
    events = p.feed(" more")
    assert [e.kind for e in events] == ["text"]


def test_a_reply_without_calls_streams_before_the_output_ends() -> None:
    p = stream_parser("auto")
    events = [e for piece in ["The forecast ", "for Lisbon ", "is sunny."] for e in p.feed(piece)]
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown.startswith("The forecast for Lisbon")  # not held back until close
    shown += "".join(e.text for e in p.close() if isinstance(e, TextDelta))
    assert shown == p.result.content == "The forecast for Lisbon is sunny."


@pytest.mark.parametrize("size", [1, 3, 7])
def test_streamed_events_add_up_to_the_result_on_the_corpora(corpora_dir: Path, size: int) -> None:
    checked = 0
    for path in sorted(corpora_dir.glob("*.jsonl")):
        if path.stem in ("json_repair", "partial_json", "openai_json_arguments", "pythonic"):
            continue  # not text-format outputs (pythonic: its 3,800 BFCL lines are covered by test_corpus)
        for line in path.read_text(encoding="utf-8").splitlines()[::3]:
            text = json.loads(line)["text"]
            p = stream_parser("auto")
            events = [e for i in range(0, len(text), size) for e in p.feed(text[i : i + size])] + p.close()
            result = p.result
            assert result == parse(text, "auto"), f"{path.name}: {text[:80]!r}"
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == result.content, path.name
            reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
            assert reasoning == (result.reasoning or ""), path.name
            assert [e.call for e in events if isinstance(e, CallCompleted)] == result.calls, path.name
            checked += 1
    assert checked > 300


def test_plain_text_streams_as_it_comes_while_every_candidate_waits() -> None:
    p = stream_parser("auto")
    pieces = ("Let me look that ", "up for you; ", "the forecast.")
    assert [p.feed(piece) for piece in pieces] == [[TextDelta(piece)] for piece in pieces]
    p.close()
    assert p.result.content == "Let me look that up for you; the forecast."


def test_text_that_may_begin_a_word_marker_is_held_back_until_the_next_delta_shows_it_is_not_one() -> None:
    p = stream_parser("auto")
    p.feed("Let me look that up. ")  # every candidate now waits
    assert p.feed("Done f") == [TextDelta("Done ")]  # `f` may begin `functools`
    assert p.feed("unc") == []
    assert p.feed("or now.") == [TextDelta("funcor now.")]
    p.close()
    assert p.result.content == "Let me look that up. Done funcor now."
