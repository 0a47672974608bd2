from tether.dialects import parse
from tether.types import Provenance, ToolCall

from .conftest import StreamCheck

SEED_001 = """I'll read it.
```yaml
type: tool_call
tool: fs.read
args:
  path: src/parser.ts
  # Part of the expression parser audit
  # Previous read showed parseAtom, now checking parseExpression
  why: "Check if recursive descent handles nested expressions"
```
"""


def test_comments_are_kept_as_annotations(check_stream: StreamCheck) -> None:
    result = check_stream(SEED_001, "yaml")
    assert result.calls == [
        ToolCall(
            id="call_0",
            name="fs.read",
            arguments={
                "path": "src/parser.ts",
                "why": "Check if recursive descent handles nested expressions",
            },
            annotations=(
                "Part of the expression parser audit",
                "Previous read showed parseAtom, now checking parseExpression",
            ),
            provenance=Provenance(dialect="yaml", span=(14, len(SEED_001) - 1)),
        )
    ]
    assert result.content == "I'll read it.\n\n"


def test_bare_blocks_end_at_a_blank_line(check_stream: StreamCheck) -> None:
    text = "Then:\ntype: tool_call\ntool: fs.ls\nargs: {path: ., why: list it}\n\nDone."
    result = check_stream(text, "yaml")
    assert [(c.name, c.arguments) for c in result.calls] == [("fs.ls", {"path": ".", "why": "list it"})]
    assert result.content == "Then:\nDone."  # the blank line that ends the block belongs to it


def test_invalid_yaml_is_an_error() -> None:
    result = parse("```yaml\ntype: tool_call\ntool: [unclosed\n```", "yaml")
    assert result.calls == []
    assert result.errors[0].message.startswith("invalid YAML")
