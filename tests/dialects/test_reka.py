"""Reka (Edge 2603, Flash 3): the shapes of llama.cpp #21616 / #21892 and its `common/chat-reka.cpp` (a `<tool_call>`
wrapper per call, JSON inside, `<think>` reasoning the generation prompt may open) and of Reka's model cards
(`<reasoning>` thinking, `<sep>` ending the turn)."""

from tether.dialects import CallStarted, get_dialect, parse, stream_parser
from tether.envelopes import ok
from tether.types import ToolCall, ToolResultMessage

from .conftest import StreamCheck

WEATHER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
TIME = '<tool_call>\n{"name": "get_time", "arguments": {"tz": "Europe/Paris"}}\n</tool_call>'


def test_parallel_calls_each_in_its_own_wrapper(check_stream: StreamCheck) -> None:
    # llama.cpp #21616: "each tool call gets its own <tool_call>...</tool_call> wrapper"
    result = check_stream(f"{WEATHER}\n{TIME}", "reka")
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "Europe/Paris"}),
    ]
    assert result.content.strip() == ""
    assert not result.errors


def test_reasoning_then_a_call_then_the_turn_separator(check_stream: StreamCheck) -> None:
    text = f"<reasoning>The user wants the weather in Paris.</reasoning>\n{WEATHER}<sep>"
    result = check_stream(text, "reka")
    assert result.reasoning == "The user wants the weather in Paris."
    assert [c.name for c in result.calls] == ["get_weather"]
    assert result.content == "\n"  # the `<sep>` a server did not stop at is no content


def test_a_call_written_inside_reasoning_is_no_call(check_stream: StreamCheck) -> None:
    text = f"<reasoning>I could write {TIME} but the user asked for the weather.</reasoning>{WEATHER}"
    result = check_stream(text, "reka")
    assert [c.name for c in result.calls] == ["get_weather"]
    assert "get_time" in (result.reasoning or "")


def test_an_answer_with_no_call(check_stream: StreamCheck) -> None:
    result = check_stream("<reasoning>2 + 2 = 4</reasoning> The answer is 4. <sep>", "reka")
    assert (result.content, result.reasoning, result.calls) == (" The answer is 4. ", "2 + 2 = 4", [])


def test_a_call_cut_off_by_the_end_of_the_output_is_repaired(check_stream: StreamCheck) -> None:
    result = check_stream('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"', "reka")
    assert [c.arguments for c in result.calls] == [{"city": "Paris"}]
    provenance = result.calls[0].provenance
    assert provenance is not None
    assert provenance.repairs


def test_a_call_is_announced_while_it_streams() -> None:
    p = stream_parser("reka")
    events = p.feed('<tool_call>{"name": "get_weather", "arguments": {"ci')
    assert events[:1] == [CallStarted(id="call_0", name="get_weather")]


def test_render_calls_writes_a_wrapper_per_call_and_reads_back() -> None:
    calls = [
        ToolCall(id="a", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="b", name="get_time", arguments={}),
    ]
    text = get_dialect("reka").render_calls(calls)
    assert text.count("<tool_call>") == 2
    assert [(c.name, c.arguments) for c in parse(text, "reka").calls] == [
        (c.name, c.arguments) for c in calls
    ]


def test_auto_recognises_reka_by_its_reasoning_block(check_stream: StreamCheck) -> None:
    text = f"<reasoning>Weather first.</reasoning>{WEATHER}<sep>"
    result = check_stream(text, "auto")
    assert result.dialect == "reka"
    assert result.reasoning == "Weather first."
    assert [c.name for c in result.calls] == ["get_weather"]


def test_auto_reads_a_bare_call_or_think_block_as_hermes(check_stream: StreamCheck) -> None:
    # the same `<tool_call>` JSON with no `<reasoning>` is ambiguous: the earlier, commoner format reads it
    assert check_stream(WEATHER, "auto").dialect == "hermes"
    assert check_stream(f"<think>hm</think>{WEATHER}", "auto").reasoning == "hm"


def test_reka_edge_thinks_in_think_tags(check_stream: StreamCheck) -> None:
    # llama.cpp's Reka Edge handler (common/chat-reka.cpp): `<think>...</think>`, then content, then the calls
    text = f"<think>The user wants Paris.</think>\nLet me check.\n{WEATHER}\n{TIME}<sep>"
    result = check_stream(text, "reka")
    assert result.reasoning == "The user wants Paris."
    assert result.content == "\nLet me check.\n\n"
    assert [c.name for c in result.calls] == ["get_weather", "get_time"]
    assert not result.errors


def test_output_beginning_inside_the_think_block_its_generation_prompt_opened() -> None:
    # with thinking enabled, Reka Edge's generation prompt ends with `<think>`: the output shows only `</think>`
    text = f"Paris, so the weather tool.</think>\n{WEATHER}"
    for size in (1, 3, 7, len(text)):
        p = stream_parser("reka")
        p.open_reasoning()
        for i in range(0, len(text), size):
            p.feed(text[i : i + size])
        p.close()
        assert p.result.reasoning == "Paris, so the weather tool."
        assert [c.name for c in p.result.calls] == ["get_weather"]
        assert p.result.content == "\n"


def test_a_call_inside_a_think_block_is_no_call(check_stream: StreamCheck) -> None:
    result = check_stream(f"<think>maybe {TIME}?</think>{WEATHER}", "reka")
    assert [c.name for c in result.calls] == ["get_weather"]


def test_results_go_back_in_tool_response_tags() -> None:
    # chat-reka.cpp keeps `<tool_response>` / `</tool_response>` as the template's tokens for results
    text = get_dialect("reka").render_results(
        [ToolResultMessage(call_id="a", name="get_weather", envelope=ok({"temp": 21}))]
    )
    assert text.startswith("<tool_response")
    assert text.rstrip().endswith("</tool_response>")
    assert '"temp":21' in text
