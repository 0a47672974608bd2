"""MOOLLM YAML definitions (seed 001), including the seed's own tool listings."""

import re
from pathlib import Path

import pytest

from tether.exceptions import UserError
from tether.tools import dump_yaml, specs_from_yaml
from tether.types import SandboxPolicy, ToolExample, ToolSpec


def seed_yaml_blocks(corpora_dir: Path) -> list[str]:
    seed = next((corpora_dir.parent / "seeds").glob("001_*.txt")).read_text(encoding="utf-8")
    return re.findall(r"```yaml\n(.*?)```", seed, re.S)


def test_the_seeds_exec_memory_and_custom_tool_listings_load(corpora_dir: Path) -> None:
    loaded: dict[str, ToolSpec] = {}
    for block in seed_yaml_blocks(corpora_dir):
        try:
            specs = specs_from_yaml(block)
        except UserError:
            continue  # the seed also holds the meta-schema, call examples and one block that is not valid YAML
        loaded.update({s.name: s for s in specs})
    assert {"terminal.run", "python.exec", "js.exec", "memory.summarize", "memory.advise",
            "video.extract_frames"} <= set(loaded)  # fmt: skip
    run = loaded["terminal.run"]
    assert run.requires_why
    assert run.input_schema["properties"]["cmd"] == {
        "type": "array", "items": {"type": "string"}, "description": "Command and arguments",
    }  # fmt: skip
    assert run.input_schema["required"] == ["cmd"]
    assert run.input_schema["properties"]["timeout_ms"] == {"type": "integer", "default": 30000}
    assert run.sandbox == SandboxPolicy(network=False, timeout_ms=30000)
    assert run.output_schema is not None
    assert run.output_schema["properties"]["exit_code"] == {"type": "integer"}
    assert loaded["video.extract_frames"].metadata == {"mcp_server": "video-tools"}


def test_shorthand_types_become_json_schema() -> None:
    (spec,) = specs_from_yaml(
        """
fs.ls:
  description: List directory contents
  input_schema:
    properties:
      path: {type: string}
      why: {type: string}
    required: [path, why]
  output_schema:
    type: array
    items:
      type: object
      properties:
        name: string
        kind: '"file" | "directory"'
        size: int
        tags: string[]
"""
    )
    assert spec.name == "fs.ls"
    assert spec.input_schema == {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }
    assert spec.requires_why
    assert spec.output_schema == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "kind": {"enum": ["file", "directory"]},
                "size": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        },
    }


def test_every_field_round_trips_through_dump_yaml() -> None:
    text = """
tool:
  name: fs.read
  description: Read file contents
  category: fs
  side_effects: none
  scopes: [files.read]
  input_schema:
    properties:
      path: {type: string}
      range:
        type: object
        properties: {start: int, end: int}
    required: [path]
  sandbox: {network: false, filesystem: ["workspace/**"], timeout_ms: 1000}
  examples:
    - input: {path: README.md}
      output: {content: "# hi", lines: 1, truncated: false}
      why: Learn what the project is
---
tool:
  name: note
  requires_why: false
"""
    specs = specs_from_yaml(text)
    assert specs[0].examples == (
        ToolExample(input={"path": "README.md"}, output={"content": "# hi", "lines": 1, "truncated": False},
                    why="Learn what the project is"),
    )  # fmt: skip
    assert specs[0].sandbox.filesystem == ("workspace/**",)
    assert not specs[1].requires_why
    assert specs_from_yaml(dump_yaml(specs)) == specs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tool: [", "not valid YAML"),
        ("just a string", "expected a mapping"),
        ("tool: {description: no name}", "needs a string `name`"),
        ("tool: {name: t, input_schema: {properties: {n: {type: integr}}}}", "unknown type 'integr'"),
        ("tool: {name: t, sandbox: {timeout_ms: -1}}", "timeout_ms"),
        (
            "tool: {name: t, requires_why: false, input_schema: {properties: {why: string}}}",
            "drop one of them",
        ),
        ("", "no tool definitions"),
    ],
)
def test_bad_definitions_are_user_errors(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        specs_from_yaml(text)
