"""`harmony`: gpt-oss's channels. `<|channel|>analysis<|message|>...<|end|>` is reasoning,
`<|channel|>final<|message|>...` is content, and a message addressed `to=functions.name` is a call whose
arguments are the message (`<|call|>` ends it). Built-in tools addressed as `to=browser.search` (on any
channel) are calls to the tool of that dotted name.

Servers that strip special tokens turn that into plain `analysisThe user asks...assistantfinal...`: output
that begins that way (`analysis` directly followed by text) or with `assistantfinal` is read in that form, the
analysis as reasoning and what follows `assistantfinal` as content.

Templates that end the prompt with `<|start|>assistant` (or `<|start|>assistant<|channel|>`) leave output that
begins inside the header: ` to=functions.f<|channel|>commentary json<|message|>{...}<|call|>` or
`commentary to=functions.f <|constrain|>json<|message|>{...}`, read as the header they continue."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar, cast

from tether._literals import loads
from tether.dialects._dialect import Dialect
from tether.dialects._prompt import tool_json_lines
from tether.dialects._regions import Opener, RegionParser
from tether.dialects._render import json_text
from tether.dialects._results import result_text
from tether.dialects._tools import ToolIndex
from tether.types import Repair, ToolCall, ToolResultMessage

__all__ = ["Harmony"]

_TO = re.compile(r"to=([^\s<]+)")
_END_MARKS = ("<|end|>", "<|call|>", "<|return|>")


_STRIPPED_FINAL = Opener("assistantfinal", "drop", tag="stripped_final")


class _Parser(RegionParser):
    openers = (
        Opener("<|start|>", "drop", tag="start"),
        Opener("<|channel|>", "drop", tag="channel"),
        Opener("<|constrain|>", "drop", tag="constrain"),
        Opener("<|message|>", "drop", tag="message"),
        *(Opener(m, "drop", tag="end") for m in _END_MARKS),
        # `analysis` then text with no space between, as stripping `<|message|>` leaves it ("analysis of"
        # is English, not this form)
        Opener(
            "analysis",
            "drop",
            output_start=True,
            guard=re.compile(r"analysis\S"),
            guard_len=9,
            tag="stripped_analysis",
        ),
        replace(_STRIPPED_FINAL, output_start=True),
        # the template consumed `<|start|>assistant` (and maybe `<|channel|>`): the output begins in a header
        Opener("to=", "drop", output_start=True, guard=re.compile(r"to=\w"), guard_len=4, tag="header_to"),
        Opener(
            "commentary",
            "drop",
            output_start=True,
            guard=re.compile(r"commentary\s+to=\w"),
            guard_len=24,
            viable=re.compile(r"commentary\s*(?:t(?:o=?)?)?"),
            tag="header_channel",
        ),
    )

    def __init__(self, dialect: str, tools: ToolIndex):
        super().__init__(dialect, tools)
        self._state = "text"
        self._header: list[str] = []
        self._channel = ""
        self._recipient: str | None = None
        self._args: list[str] = []
        self._call_id: str | None = None
        self._call_start = 0
        self._lstrip = False
        """Drop the whitespace that follows a stripped `assistantfinal`."""
        self._plain_text_is_content = True

    def _routed(self) -> None:
        """After the state changed: plain text is content (and may skip `after_text`) only in the text state."""
        self._plain_text_is_content = self._state == "text" and not self._lstrip

    @property
    def busy_since(self) -> int | None:
        return self._call_start if self._call_id is not None and self._state == "body" else super().busy_since

    def on_region(self, opener: Opener, body: str, span: tuple[int, int], complete: bool) -> None:
        """Harmony has no regions; markers drive a small state machine."""

    def on_marker(self, opener: Opener, position: int) -> None:
        self._route(opener, position)
        self._routed()

    def _route(self, opener: Opener, position: int) -> None:
        tag = opener.tag
        if tag.startswith("stripped_"):  # special tokens stripped: `analysis...assistantfinal...`
            self.use_openers((_STRIPPED_FINAL,))
            self._finish_body(position, complete=True)
            self._channel = "analysis" if tag == "stripped_analysis" else "final"
            self._state, self._recipient, self._call_id, self._args = "body", None, None, []
            self._lstrip = tag == "stripped_final"
            if tag == "stripped_analysis":
                self._emit.reasoning("")
            return
        if tag.startswith("header_"):
            self._state, self._header = "header", ["to=" if tag == "header_to" else " <channel> commentary"]
        elif tag == "start":
            self._finish_body(position, complete=False)
            self._state, self._header = "header", []
        elif tag in ("channel", "constrain"):
            if self._state == "body":
                self._finish_body(position, complete=False)
                self._header = []
            self._state = "header"
            self._header.append(f" <{tag}> ")
        elif tag == "message":
            self._open_body(position + len(opener.start))
        else:
            self._finish_body(position + len(opener.start), complete=True)
            self._state = "text"

    def _open_body(self, position: int) -> None:
        header = "".join(self._header)
        self._header = []
        m = re.search(r"<channel>\s*(\S*)", header)
        self._channel = m.group(1) if m else ""
        to = _TO.search(header)
        self._recipient = to.group(1) if to else None
        self._state = "body"
        self._args = []
        self._call_id = None
        self._call_start = position
        if self._recipient and "." in self._recipient:
            self._call_id = self._emit.new_id()
            self._emit.started(self._call_id, self._recipient.removeprefix("functions."))
        elif self._channel == "analysis" or (self._channel == "commentary" and self._recipient):
            self._emit.reasoning("")

    def _finish_body(self, position: int, *, complete: bool) -> None:
        if self._state != "body":
            return
        self._state = "text"
        if self._call_id is None or self._recipient is None:
            return
        name = self._recipient.removeprefix("functions.")
        text = "".join(self._args)
        span = (self._call_start, position)
        repairs = (
            [] if complete else [Repair(kind="unterminated", message="the call's end marker is missing")]
        )
        parsed = loads(text) if text.strip() else None
        value: Any = parsed.value if parsed else {}
        if parsed is not None and (not parsed.ok or not isinstance(value, dict)):
            self._emit.fail(f"arguments of {name} are not a JSON object", span, text, call_id=self._call_id)
            return
        self._emit.call(
            name,
            cast("dict[str, Any]", value),
            span,
            [*repairs, *(parsed.repairs if parsed else [])],
            call_id=self._call_id,
            announced=True,
        )

    def after_text(self, text: str) -> None:
        if self._lstrip:
            stripped = text.lstrip()
            if not stripped:
                return
            self._lstrip = False
            self._routed()
            text = stripped
        if self._state == "header":
            self._header.append(text)
        elif self._state == "body":
            if self._call_id is not None:
                self._args.append(text)
                self._emit.delta(self._call_id, text)
            elif self._channel == "analysis" or (self._channel == "commentary" and self._recipient):
                self._emit.reasoning(text)
            else:
                self._emit.text(text)
        else:
            self._emit.text(text)

    def _close(self) -> None:
        super()._close()
        self._finish_body(self._emit.fed, complete=False)


class Harmony(Dialect):
    """gpt-oss harmony format."""

    name: ClassVar[str] = "harmony"

    parser = _Parser

    def render_tools(self, tools: ToolIndex) -> str:
        return (
            "# Tools\n\n## functions\n\n" + tool_json_lines(tools) + "\n\nTo call a function, write "
            "<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>"
        )

    def render_results(self, results: Sequence[ToolResultMessage]) -> str:
        return "".join(
            f"<|start|>{'' if '.' in r.name else 'functions.'}{r.name} to=assistant<|channel|>commentary<|message|>"
            f"{result_text(r.envelope)}<|end|>"
            for r in results
        )

    def render_calls(self, calls: Sequence[ToolCall]) -> str:
        return "".join(
            f"<|start|>assistant<|channel|>commentary to=functions.{c.name} <|constrain|>json<|message|>"
            f"{json_text(c.arguments)}<|call|>"
            for c in calls
        )
