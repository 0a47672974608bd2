"""The terminal never shows a value a tool's input schema marks secret: not the call line of `tether run` and
`tether chat`, not `--confirm`'s question (a scrollback, a screen share or a `tee` log keeps what it shows)."""

import io
from typing import Annotated

import pytest
from pydantic import Field
from rich.console import Console

from tether import tool
from tether.cli._printer import EventPrinter
from tether.tools import Toolset
from tether.types import ToolCall, ToolStartEvent

PASSWORD = "Zq9Kx7-correct-horse"


@tool(side_effects="none")
def login(user: str, password: Annotated[str, Field(json_schema_extra={"format": "password"})]) -> str:
    """Log in."""
    return f"welcome {user}"


def printer() -> tuple[EventPrinter, io.StringIO]:
    out = io.StringIO()
    shown = EventPrinter(Console(file=out, width=200), show_stream=True)
    shown.toolset = Toolset(login)
    return shown, out


CALL = ToolCall(id="c1", name="login", arguments={"user": "ada", "password": PASSWORD, "why": "to log in"})


def test_the_call_line_shows_a_secret_argument_as_stars() -> None:
    shown, out = printer()
    shown(ToolStartEvent(run_id="r", data="", call=CALL))
    line = out.getvalue()
    assert PASSWORD not in line
    assert '"password": "***"' in line
    assert '"user": "ada"' in line
    assert "why: to log in" in line


def test_the_confirm_question_shows_a_secret_argument_as_stars(monkeypatch: pytest.MonkeyPatch) -> None:
    shown, _ = printer()
    asked: list[str] = []

    def answer(question: object) -> str:
        asked.append(str(question))
        return "y"

    monkeypatch.setattr(shown.console, "input", answer)
    assert shown.approve(CALL)
    assert PASSWORD not in asked[0]
    assert '"password": "***"' in asked[0]


def test_a_tool_the_printer_does_not_know_is_shown_as_called() -> None:
    shown, out = printer()
    shown.toolset = None  # before the run's tools are known
    shown(ToolStartEvent(run_id="r", data="", call=CALL))
    assert PASSWORD in out.getvalue()  # nothing says it is secret: shown as the model wrote it
