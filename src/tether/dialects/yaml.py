"""`yaml`: seed 001's `type: tool_call / tool: / args:` blocks, in a ```yaml fence or bare.

YAML comments are semantic (seed 001 §4): every comment line in a call's block is kept on the call as an
annotation. A fence may hold several calls, as YAML documents (`---`) or a list. A bare block starts at
a line `type: tool_call` and runs to the first blank line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import yaml

from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._regions import Opener
from tether.dialects._results import result_value
from tether.dialects._tools import ToolIndex
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["Yaml"]

_FENCE = re.compile(r"```ya?ml[ \t]*\n(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*(?:-[ \t]+)?type:[ \t]*[\"']?tool_call")
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BARE = "type: tool_call"
_DOC_SPLIT = re.compile(r"^---[ \t]*$", re.MULTILINE)


def _comments(block: str) -> tuple[str, ...]:
    out: list[str] = []
    for line in block.splitlines():
        s = line.strip()
        if s.startswith("#"):
            out.append(s.lstrip("#").strip())
    return tuple(x for x in out if x)


@dataclass(frozen=True, slots=True)
class _YamlCalls:
    """YAML documents of calls: a fence's content (after its language line), or a bare block (`head` is the
    opener it began with, part of the YAML)."""

    head: str = ""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        text = self.head + text if self.head else text[text.find("\n") + 1 :]
        extra = (
            [] if complete or self.head else [Repair(kind="unterminated", message="closing fence missing")]
        )
        for doc in _DOC_SPLIT.split(text):
            if doc.strip():
                self._doc(out, doc, span, extra)

    def _doc(self, out: Emitter, doc: str, span: tuple[int, int], extra: list[Repair]) -> None:
        try:
            value: Any = yaml.load(doc, Loader=_LOADER)
        except Exception as e:  # PyYAML raises many error types (and RecursionError) on bad input
            out.fail(f"invalid YAML: {str(e).splitlines()[0] if str(e) else type(e).__name__}", span, doc)
            return
        items = cast("list[Any]", value) if isinstance(value, list) else [value]
        notes = _comments(doc)
        for item in items:
            if not isinstance(item, dict):
                out.fail("a tool call is a mapping with type, tool and args", span, doc)
                continue
            call = cast("dict[str, Any]", item)
            name = call.get("tool") or call.get("name")
            if call.get("type", "tool_call") != "tool_call" or not isinstance(name, str) or not name:
                out.fail("a tool call needs `type: tool_call` and a `tool` name", span, doc)
                continue
            args = call.get("args", call.get("arguments", {}))
            if args is None:
                args = {}
            if not isinstance(args, dict):
                out.fail(f"args of {name} must be a mapping", span, doc)
                continue
            why = call.get("why")
            priority = call.get("priority")
            out.call(
                name,
                _jsonable(args),
                span,
                extra,
                call_id=str(call["id"]) if call.get("id") else None,
                why=why if isinstance(why, str) else None,
                priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
                annotations=notes,
            )


def _jsonable(value: Any) -> Any:
    """YAML may produce dates and other non-JSON scalars; tool arguments are JSON, so those become text."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in cast("dict[Any, Any]", value).items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in cast("list[Any]", value)]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


class Yaml(Dialect):
    """Seed 001's YAML tool calls."""

    name: ClassVar[str] = "yaml"

    openers = (
        Opener("```", ends=("```",), body=_YamlCalls(), guard=_FENCE, guard_len=160),
        Opener(_BARE, ends=("\n\n", "\n```"), body=_YamlCalls(head=_BARE), line_start=True),
    )

    def render_tools(self, tools: ToolIndex) -> str:
        catalog: dict[str, Any] = {}
        for s in tools.specs.values():
            entry: dict[str, Any] = {"description": s.description} if s.description else {}
            props = cast("dict[str, Any]", s.input_schema.get("properties") or {})
            required = set(cast("list[str]", s.input_schema.get("required") or []))
            entry["args"] = {
                k + ("" if k in required else "?"): cast("dict[str, Any]", v).get("type", "any")
                for k, v in props.items()
            }
            catalog[s.name] = entry
        listing = yaml.safe_dump(catalog, sort_keys=False, allow_unicode=True, width=110).strip()
        return (
            "To call a tool, write a YAML block:\n```yaml\ntype: tool_call\ntool: <name>\nargs:\n  <arg>: <value>\n"
            '  why: "<one sentence: what you are trying to accomplish>"\n```\n'
            "Every call needs `why`. Comments (# ...) in the block are kept with the call. Tools:\n" + listing
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        docs = [
            {
                "type": "tool_result",
                "tool": r.name,
                "id": r.call_id,
                **result_value(r.envelope),
            }
            for r in results
        ]
        return "```yaml\n" + yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True).strip() + "\n```"

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        """One fenced block per call."""
        return "".join(
            "```yaml\n"
            + yaml.safe_dump(
                {"type": "tool_call", "tool": c.name, "args": c.arguments},
                allow_unicode=True,
                sort_keys=False,
            )
            + "```\n"
            for c in calls
        )
