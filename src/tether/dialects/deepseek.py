"""`deepseek_v3` and `deepseek_v31`: DeepSeek's `tool call begin ... tool call end` special tokens.

The tokens use FULLWIDTH VERTICAL LINE and LOWER ONE EIGHTH BLOCK characters (spelled with escapes
below). V3: `function<sep>name` then the arguments in a ```json fence; V3.1: `name<sep>{json}`. Each
parser reads both forms. Thinking in `<think>...</think>` is reasoning. `deepseek_r1` is V3's format after
reasoning, read a little more leniently (the spellings of the section token R1 is known to write).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, cast

from tether._literals import loads
from tether.dialects._dialect import Dialect
from tether.dialects._emitter import Emitter
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import THINK, Opener
from tether.dialects._render import json_text
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["DeepSeekR1", "DeepSeekV3", "DeepSeekV31"]


def _token(words: str) -> str:
    return "<\uff5c" + words.replace(" ", "\u2581") + "\uff5c>"


SEP = _token("tool sep")
CALLS_BEGIN, CALLS_END = _token("tool calls begin"), _token("tool calls end")
CALL_BEGIN, CALL_END = _token("tool call begin"), _token("tool call end")
EOS = _token("end of sentence")
OUTPUT_BEGIN, OUTPUT_END = _token("tool output begin"), _token("tool output end")


class _Call:
    """`function<sep>name\n```json{...}```` (V3) or `name<sep>{json}` (V3.1): one call."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        head, sep, rest = text.partition(SEP)
        if not sep:
            out.fail("a DeepSeek tool call needs the tool sep token", span, text)
            return
        head = head.strip()
        if head == "function" or head.endswith(("function", "type")):  # V3: the name follows the separator
            name, _, rest = rest.partition("\n")
        else:
            name = head
        name = name.strip()
        if not name:
            out.fail("a DeepSeek tool call needs a name", span, text)
            return
        extra = [] if complete else [Repair(kind="unterminated", message="the call's end marker is missing")]
        parsed = loads(rest) if rest.strip() else None
        if parsed is None:
            out.call(name, {}, span, extra)
            return
        value: Any = parsed.value
        if not parsed.ok or not isinstance(value, dict):
            out.fail(f"arguments of {name} are not a JSON object: {parsed.error}", span, text)
            return
        repairs = [r for r in parsed.repairs if r.kind != "code_fence"]  # the V3 format fences by design
        out.call(name, cast("dict[str, Any]", value), span, [*extra, *repairs])


# R1 writes the section's begin token in several spellings; its calls may lack their own begin token.
_R1_SECTIONS = (
    CALLS_BEGIN,
    "<\uff5ctool_calls_begin\uff5c>",
    "<\uff5ctool calls begin\uff5c>",
    "<\uff5ctool\\_calls\\_begin\uff5c>",
    _token("tool calls"),
)


class _Section:
    """A whole tool calls section (R1): calls split at their end tokens, their begin tokens optional."""

    def read(self, out: Emitter, text: str, span: tuple[int, int], complete: bool) -> None:
        calls = [c.replace(CALL_BEGIN, "").strip() for c in text.split(CALL_END)]
        if not any(calls):
            out.fail("no tool call in the tool calls section", span, text)
        for n, call in enumerate(calls):
            if call:  # only the last one can lack its end token
                _CALL.read(out, call, span, complete or n < len(calls) - 1)


_CALL = _Call()
_OPENERS = (
    Opener(CALL_BEGIN, ends=(CALL_END, CALLS_END), body=_CALL),
    Opener(CALLS_BEGIN, "drop"),
    Opener(CALLS_END, "drop"),
    Opener(EOS, "drop"),
    THINK,
)


class DeepSeekV3(Dialect):
    """DeepSeek V3."""

    name: ClassVar[str] = "deepseek_v3"

    openers = _OPENERS

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"## Tools\n\n### Functions\n\n{tool_json_lines(tools)}\n\nTo call a function, write:\n"
            f"{CALLS_BEGIN}{CALL_BEGIN}function{SEP}<name>\n```json\n<arguments>\n```{CALL_END}{CALLS_END}"
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "".join(f"{OUTPUT_BEGIN}{result_text(r.envelope)}{OUTPUT_END}" for r in results)

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        if not calls:
            return ""
        body = "".join(
            f"{CALL_BEGIN}function{SEP}{c.name}\n```json\n{json_text(c.arguments)}\n```{CALL_END}"
            for c in calls
        )
        return f"{CALLS_BEGIN}{body}{CALLS_END}"


class DeepSeekV31(DeepSeekV3):
    """DeepSeek V3.1 (name before the separator, bare JSON arguments)."""

    name: ClassVar[str] = "deepseek_v31"

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            f"## Tools\n\n{tool_json_lines(tools)}\n\nTo call a function, write:\n"
            f"{CALLS_BEGIN}{CALL_BEGIN}<name>{SEP}<json arguments>{CALL_END}{CALLS_END}"
        )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        if not calls:
            return ""
        body = "".join(f"{CALL_BEGIN}{c.name}{SEP}{json_text(c.arguments)}{CALL_END}" for c in calls)
        return f"{CALLS_BEGIN}{body}{CALLS_END}"


class DeepSeekR1(DeepSeekV3):
    """DeepSeek R1: V3's calls after `<think>` reasoning (its template may open the block itself: pass
    `reasoning_open=True`), with the section's begin token in any of the spellings R1 writes."""

    name: ClassVar[str] = "deepseek_r1"

    openers = (*(Opener(start, ends=(CALLS_END,), body=_Section()) for start in _R1_SECTIONS), *_OPENERS[1:])
