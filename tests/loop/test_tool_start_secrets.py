"""`on_tool_start`'s text (seed 004's `Starting tool: X with inputs: {...}`) never shows what the tool's input
schema marks secret: a client that logs the line logs `'***'` instead, as the journal does."""

import pytest

from _secret_tools import PASSWORD, PASSWORD_FIELD, SECRET_NUMBER, hermes, marked
from tether import Agent, tool
from tether.models import ScriptedModel
from tether.types import Event, ToolStartEvent

pytestmark = pytest.mark.anyio


@tool(side_effects="none")
def login(user: str, password: str, pin: int, remember: bool = False) -> str:
    """Log in."""
    return f"welcome {user}" if password == PASSWORD and pin == 4821 else "wrong password"


LOGIN = marked(login, inputs={"password": PASSWORD_FIELD, "pin": SECRET_NUMBER})


async def test_the_tool_start_line_shows_secret_arguments_as_stars() -> None:
    started: list[ToolStartEvent] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ToolStartEvent):
            started.append(event)

    model = ScriptedModel([hermes("login", user="ada", password=PASSWORD, pin=4821), "Logged in."])
    result = await Agent(model, [LOGIN], dialect="hermes").run("log me in", on_event=on_event)

    assert result.output == "Logged in."
    assert [e.data for e in started] == [
        "Starting tool: login with inputs: {'user': 'ada', 'password': '***', 'pin': '***'}"
    ]
    # the call too: events never carry a secret (docs/sessions.md); the tool got the value
    assert started[0].call.arguments == {"user": "ada", "password": "***", "pin": "***"}


async def test_the_tool_start_line_of_a_tool_without_secrets_is_unchanged() -> None:
    @tool(side_effects="none")
    def search_docs(query: str) -> str:
        """Search the docs."""
        return f"results for {query}"

    started: list[str] = []
    model = ScriptedModel([hermes("search_docs", query="ollama"), "Found."])
    await Agent(model, [search_docs], dialect="hermes").run(
        "search", on_event=lambda e: started.append(e.data) if isinstance(e, ToolStartEvent) else None
    )
    assert started == ["Starting tool: search_docs with inputs: {'query': 'ollama'}"]
