from tether.dialects import parse


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
