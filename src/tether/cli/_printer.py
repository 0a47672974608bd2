"""What `tether run` and `tether chat` show: a run as it happens, and why it stopped if it did."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from tether.loop import Limits, RunResult
from tether.tools import AbstractToolset, SecretText, redact
from tether.types import (
    ChainEndEvent,
    ChatEvent,
    ChatModelStreamEvent,
    ErrorEnvelope,
    ErrorEvent,
    Event,
    NeedsEnvelope,
    OpenUrlEvent,
    SpeechEvent,
    ToolCall,
    ToolEndEvent,
    ToolStartEvent,
)

__all__ = ["FINISHED", "EventPrinter", "stopped"]

LIMIT_OPTIONS = {
    "max_iterations": ("model turn", "--max-turns"),
    "max_tool_calls": ("tool call", "--max-calls"),
    "max_tokens": ("output token", "--max-tokens"),
    "max_wall_time": ("second", "--max-seconds"),
}
LIMIT_VALUES = {
    "max_iterations": "max_iterations",
    "max_tool_calls": "max_tool_calls",
    "max_tokens": "max_tokens",
    "max_wall_time": "max_wall_time_s",
}
FINISHED = frozenset({"no_calls", "end_turn", "final_response"})
"""Reasons a run ends because the model finished; any other reason is a stop (a limit, a failure)."""


def stopped(result: RunResult, limits: Limits) -> str | None:
    """Why a run stopped before the model finished, and how to let it go further; None if it finished."""
    reason = result.reason
    if reason in FINISHED:
        return None
    if reason in LIMIT_OPTIONS:
        what, option = LIMIT_OPTIONS[reason]
        value = getattr(limits, LIMIT_VALUES[reason])
        more = value * 2 if isinstance(value, int) else f"{value * 2:g}"
        what += "" if value == 1 else "s"
        return (
            f"the run stopped at its limit of {value:g} {what} ({reason}) before the model finished; "
            f"raise it with {option}, e.g. {option} {more}."
        )
    if reason == "retry_budget":
        return (
            f"the run stopped: a tool refused the model's calls {limits.retry_budget} times (retry_budget); "
            "the refusals above say what it got wrong."
        )
    if reason == "invalid_final_response":
        return "the run stopped: the model's final answer did not match the required format."
    return f"the run stopped before the model finished ({reason})."


class EventPrinter:
    """Shows a run as it happens: streamed text, each tool call with its why, its envelope, and how it ended.

    The final answer is printed once: when it was already streamed (or sent with `send_chat`), the closing
    `done` line does not repeat it.
    """

    def __init__(self, console: Console, *, show_stream: bool):
        self.console = console
        self.show_stream = show_stream
        self.in_text = False
        self.shown = ""
        """The text the user saw last: the model's streamed text since the last tool line, or a chat."""
        self.names: dict[str, str] = {}
        self.last_started: str | None = None
        self.spoken: list[Path] = []
        """Speech files `say` made: the terminal does not play them, so they are deleted (`forget_speech`)."""
        self.toolset: AbstractToolset | None = None
        """The run's tools, once known: arguments their input schemas mark secret are shown as `***`."""

    def forget_speech(self) -> None:
        for audio in self.spoken:
            audio.unlink(missing_ok=True)
        self.spoken.clear()

    def end_line(self) -> None:
        """Put the cursor on a fresh line after streamed text (before an error, or the next line)."""
        if self.in_text:
            self.console.print()
            self.in_text = False

    def pause(self) -> None:
        """Stop anything animated before the user is asked a question."""

    def resume(self) -> None:
        """Start again what `pause` stopped."""

    def approve(self, call: ToolCall) -> bool:
        """Ask the user whether `call` may run; anything but y/yes is a no, and so are Ctrl-C and Ctrl-D."""
        self.pause()
        args = json.dumps(self._arguments(call), ensure_ascii=False, default=str)
        question = Text.assemble(("allow ", "bold yellow"), (call.name, "cyan"), f"({args})? [y/N] ")
        try:
            with _interruptible():
                answer = self.console.input(question)
        except (EOFError, KeyboardInterrupt):
            self.console.print()
            return False
        finally:
            self.resume()
        return answer.strip().lower() in ("y", "yes")

    def _arguments(self, call: ToolCall) -> dict[str, Any]:
        """`call`'s arguments as the terminal may show them (a scrollback or a `tee` keeps what it shows)."""
        tool = self.toolset.get(call.name) if self.toolset is not None else None
        if tool is None:
            return call.arguments
        shown = redact(call.arguments, tool.spec.input_schema)
        if shown is call.arguments:  # the schema marks nothing secret
            return shown
        known = SecretText()  # a secret copied into a plain argument too
        known.learn(call.arguments, shown)
        return known.json(shown)

    def _owner(self, call_id: str) -> str:
        """Calls run concurrently: a result that does not follow its own call names the tool it is from."""
        if call_id == self.last_started:
            return ""
        return f"{self.names.get(call_id, call_id)}: "

    def __call__(self, event: Event) -> None:
        c = self.console
        if isinstance(event, ChatModelStreamEvent):
            if self.show_stream:
                c.print(event.data, end="")
                self.shown = self.shown + event.data if self.in_text else event.data
                self.in_text = True
            return
        self.end_line()
        match event:
            case ToolStartEvent(call=call):
                # most dialects carry `why` as an argument: show it as the why, not twice
                said = call.why if call.why is not None else call.arguments.get("why")
                shown = {k: v for k, v in self._arguments(call).items() if k != "why" or call.why is not None}
                args = json.dumps(shown, ensure_ascii=False, default=str)
                why = ("  why: " + str(said), "italic") if said else ""
                c.print(Text.assemble((f"→ {call.name}", "cyan"), f"({args})", why))
                self.names[call.id] = call.name
                self.last_started = call.id
                self.shown = ""
            case ToolEndEvent(call_id=call_id, envelope=ErrorEnvelope(error=error)):
                c.print(
                    Text.assemble((f"  ✗ {self._owner(call_id)}{error.code}", "red"), f" {error.message}")
                )
                if error.suggestion:
                    c.print(Text.assemble(("    suggestion:", "yellow"), f" {error.suggestion}"))
            case ToolEndEvent(call_id=call_id, envelope=NeedsEnvelope(needs=needs)):
                c.print(
                    Text.assemble((f"  ? {self._owner(call_id)}needs", "yellow"), f" {json.dumps(needs)}")
                )
            case ToolEndEvent(call_id=call_id, envelope=envelope):
                data = json.dumps(getattr(envelope, "data", None), ensure_ascii=False, default=str)
                c.print(Text.assemble(("  ✓", "green"), f" {self._owner(call_id)}{data[:200]}"))
            case ChatEvent(data=text):
                c.print(Text.assemble(("chat:", "bold"), f" {text}"))
                self.shown = text
            case SpeechEvent(utterance=text, audio=audio):
                c.print(Text.assemble(("say:", "bold"), f" {text}"))
                if audio is not None:
                    self.spoken.append(Path(audio))
            case OpenUrlEvent(url=url):
                c.print(Text.assemble(("open:", "bold"), f" {url}"))
            case ErrorEvent(data=data):
                c.print(Text.assemble(("error:", "red"), f" {data.get('message')}"))
            case ChainEndEvent(reason=reason, data=data) if reason in FINISHED:
                out = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
                said = "" if out.strip() in ("", self.shown.strip()) else f": {out}"
                c.print(Text.assemble(("done", "bold green"), f" ({reason}){said}"))
            case _:
                pass  # a run that stopped early is explained by `stopped` once it has ended


@contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt at once, even inside an event loop (asyncio's own handler would only
    cancel the run once the question is answered)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
