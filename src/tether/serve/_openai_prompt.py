"""The client's request as the upstream model reads it: tools taught in the dialect's prompt, the
conversation's calls and results written back in the dialect's text, no `tools` field."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from tether import envelopes
from tether.dialects import get_dialect, render_results, render_tools
from tether.exceptions import UserError
from tether.serve._openai_wire import ApiError, ChatMessageIn, ChatRequest, NamedToolChoice, ToolCallIn
from tether.tools import from_openai
from tether.types import ToolCall, ToolResultMessage, ToolSpec

__all__ = ["Taught", "insist", "render_calls", "teach"]


@dataclass(frozen=True, slots=True)
class Taught:
    """What `teach` worked out: the upstream messages, the tools offered and the rules for reading calls."""

    messages: list[dict[str, Any]]
    specs: list[ToolSpec] | None
    """The tools to read calls for; None when calls are not read (the request offers no tools)."""
    only: str | None
    """The one tool a named `tool_choice` allows."""
    none: bool
    """`tool_choice="none"`: no tool is taught, and calls the model writes anyway are read and dropped (so
    neither they nor its reasoning end up in `content`)."""
    required: bool
    """The answer must hold a call (`tool_choice="required"` or a named function): enforced by retrying."""


def teach(request: ChatRequest, dialect: str) -> Taught:
    """The upstream's messages for `request`, with its tools taught in `dialect`.

    Raises:
        ApiError: 400 for a tool definition tether cannot read or a `tool_choice` naming no offered tool.
    """
    specs = _specs(request)
    choice = request.tool_choice
    only = choice.function.name if isinstance(choice, NamedToolChoice) else None
    if only is not None and not any(s.name == only for s in specs):
        raise ApiError(400, f"tool_choice names {only!r}, which is not among the tools", param="tool_choice")
    none = choice == "none"
    teaching = bool(specs) and not none
    taught = [s for s in specs if only is None or s.name == only]
    prompt = render_tools(dialect, taught) if teaching else ""
    rules = _rules(request, only) if teaching else ""
    messages = _conversation(request.messages, dialect, "\n\n".join(p for p in (prompt, rules) if p))
    required = teaching and (only is not None or choice == "required")
    return Taught(messages, taught if specs else None, only, none, required)


def insist(taught: Taught) -> str:
    """The user message sent after an answer without the call `tool_choice` requires (see `Taught.required`)."""
    if taught.only is not None:
        return (
            f"Your reply did not call the function {taught.only}. Call {taught.only} now, written exactly in "
            "the tool call format described in the system message."
        )
    return (
        "Your reply did not call a function, and this reply must call at least one. Call one now, written "
        "exactly in the tool call format described in the system message."
    )


def render_calls(dialect: str, calls: Sequence[ToolCallIn]) -> str:
    """Earlier calls as the model would have written them in `dialect` (the dialect's own `render_calls`)."""
    written = [
        ToolCall(id=c.id, name=c.function.name, arguments=_arguments(c.function.arguments)) for c in calls
    ]
    return get_dialect(dialect).render_calls(written)


def _specs(request: ChatRequest) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    for i, tool in enumerate(request.tools or []):
        try:
            specs.append(from_openai(tool.model_dump()))
        except (UserError, ValidationError, ValueError) as e:
            raise ApiError(400, f"tools[{i}]: {e}", param=f"tools[{i}]") from e
    return specs


def _rules(request: ChatRequest, only: str | None) -> str:
    rules: list[str] = []
    if only is not None:
        rules.append(f"You must call the function {only} in your reply.")
    elif request.tool_choice == "required":
        rules.append("You must call at least one function in your reply.")
    if not request.parallel_tool_calls:
        rules.append("Call at most one function per reply.")
    return " ".join(rules)


def _conversation(messages: Sequence[ChatMessageIn], dialect: str, tool_prompt: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    results: list[ToolResultMessage] = []
    system = [m.text() for m in messages if m.role in ("system", "developer")]
    head = "\n\n".join(p for p in (*system, tool_prompt) if p)
    if head:
        out.append({"role": "system", "content": head})
    for message in messages:
        if message.role == "tool":
            call_id = message.tool_call_id or ""
            results.append(_result(call_id, names.get(call_id, "tool"), message.text()))
            continue
        if results:
            out.append({"role": "user", "content": render_results(dialect, results)})
            results = []
        if message.role in ("system", "developer"):
            continue  # merged into the one system message, first
        if message.role == "assistant":
            text = message.text()
            if message.tool_calls:
                names.update((c.id, c.function.name) for c in message.tool_calls)
                text = "\n".join(p for p in (text, render_calls(dialect, message.tool_calls)) if p)
            out.append({"role": "assistant", "content": text})
        else:
            out.append({"role": "user", "content": message.content or ""})
    if results:
        out.append({"role": "user", "content": render_results(dialect, results)})
    return out


def _result(call_id: str, name: str, content: str) -> ToolResultMessage:
    """A client's tool message as an envelope: its JSON when it is JSON, else its text."""
    try:
        data: Any = json.loads(content)
    except ValueError:
        data = content
    return ToolResultMessage(call_id=call_id, name=name, envelope=envelopes.ok(data))


def _arguments(text: str) -> dict[str, Any]:
    try:
        value: Any = json.loads(text)
    except ValueError:
        return {"arguments": text}
    return value if isinstance(value, dict) else {"arguments": value}  # pyright: ignore[reportUnknownVariableType]
