"""A child process for test_session: runs an agent that books a trip and is SIGKILLed mid-run."""

import sys
import time
from pathlib import Path

import anyio

from tether.execution import Executor
from tether.loop import Agent, Session
from tether.models import FunctionModel, ModelRequest
from tether.store import SessionStore, SqlJournal
from tether.tools import tool

DB, MARKER, STAGE = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
BOOK = '<tool_call>\n{"name": "book", "arguments": {"city": "Oslo"}}\n</tool_call>'


@tool  # mutating
def book(city: str) -> str:
    """Book a trip."""
    with MARKER.open("a") as f:
        f.write(f"booked {city}\n")
    if STAGE == "during_tool":
        time.sleep(3600)  # killed here: the call is in doubt
    return f"booked {city}"


def reply(request: ModelRequest) -> str:
    if len(request.messages) <= 2:  # the first model turn: book
        return BOOK
    MARKER.with_suffix(".waiting").write_text("waiting")  # killed here: the call completed
    time.sleep(3600)
    return "unreachable"


async def main() -> None:
    journal = SqlJournal(f"sqlite:///{DB}")
    session = Session.open("trip-1", SessionStore(journal.engine))
    agent = Agent(FunctionModel(reply), [book], dialect="hermes", executor=Executor([book], journal=journal))
    await agent.run("Book me a trip to Oslo", session=session)


anyio.run(main)
