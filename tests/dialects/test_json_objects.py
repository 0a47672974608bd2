from tether.dialects import parse, stream_parser


def _streamed(text: str, dialect: str, cuts: list[int]) -> str:
    p = stream_parser(dialect)
    last = 0
    for cut in [*cuts, len(text)]:
        p.feed(text[last:cut])
        last = cut
    p.close()
    assert p.result == parse(text, dialect)
    return p.result.content


def test_llama3_json_drops_only_the_semicolon_between_calls_whatever_the_split() -> None:
    # regression: a ';' that arrived as a chunk of its own was dropped from plain text
    text = "<tool_call></tool_call>000;<tool_call>{"
    assert _streamed(text, "llama3_json", [19, 24]) == text
    calls = '{"name": "a", "parameters": {}}; {"name": "b", "parameters": {}}'
    for cut in range(len(calls)):
        assert _streamed(calls, "llama3_json", [cut]).strip() == ""
    assert [c.name for c in parse(calls, "llama3_json").calls] == ["a", "b"]
