import json
from typing import Any

from tether.dialects import ParseResult, parse
from tether.types import Provenance, ToolCall


def test_function_call_parts_and_thoughts_are_read() -> None:
    response: dict[str, Any] = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "planning", "thought": True},
                        {"text": "Sure."},
                        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                        {"functionCall": {"id": "fc_2", "name": "now", "args": {}}},
                    ],
                }
            }
        ]
    }
    chunks = "\n".join(json.dumps(response) for _ in range(1))
    assert parse(chunks, "gemini") == ParseResult(
        dialect="gemini",
        calls=[
            ToolCall(
                id="call_0",
                name="get_weather",
                arguments={"city": "Paris"},
                provenance=Provenance(dialect="gemini"),
            ),
            ToolCall(id="fc_2", name="now", provenance=Provenance(dialect="gemini")),
        ],
        content="Sure.",
        reasoning="planning",
    )
