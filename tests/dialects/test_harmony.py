import pytest

from tether.dialects import parse

from .conftest import StreamCheck


def test_a_message_to_a_built_in_tool_is_a_call_on_any_channel() -> None:
    text = '<|channel|>analysis to=browser.search<|message|>{"query": "SGLang"}<|call|>'
    result = parse(text, "harmony")
    assert [(c.name, c.arguments) for c in result.calls] == [("browser.search", {"query": "SGLang"})]
    assert (result.content, result.reasoning) == ("", None)


def test_analysis_is_reasoning_and_final_is_content() -> None:
    text = (
        "<|channel|>analysis<|message|>think<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1}<|call|>'
        "<|start|>assistant<|channel|>final<|message|>done<|return|>"
    )
    result = parse(text, "harmony")
    assert (result.reasoning, result.content) == ("think", "done")
    assert [(c.name, c.arguments) for c in result.calls] == [("f", {"a": 1})]


def test_output_with_its_special_tokens_stripped_is_still_read(check_stream: StreamCheck) -> None:
    result = check_stream("analysisThe user wants the weather.assistantfinal It is sunny.", "harmony")
    assert (result.reasoning, result.content) == ("The user wants the weather.", "It is sunny.")
    assert check_stream("assistantfinal The direct answer.", "harmony").content == "The direct answer."


def test_text_that_merely_begins_with_the_word_analysis_is_content(check_stream: StreamCheck) -> None:
    for text in ("analysis of the data: fine", "analytics", "analysis"):
        result = check_stream(text, "harmony")
        assert (result.content, result.reasoning) == (text, None)


@pytest.mark.parametrize(
    "text",
    [
        ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>',
        'commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
    ],
)
def test_output_beginning_inside_the_header_the_template_opened_is_a_call(
    check_stream: StreamCheck, text: str
) -> None:
    result = check_stream(text, "harmony")
    assert [(c.name, c.arguments) for c in result.calls] == [("get_weather", {"city": "Paris"})]
    assert result.errors == []


@pytest.mark.parametrize("text", ["to be or not to be", "commentary on the weather", "tomorrow=sunny"])
def test_text_that_merely_begins_with_header_words_is_content(check_stream: StreamCheck, text: str) -> None:
    assert check_stream(text, "harmony").content == text
