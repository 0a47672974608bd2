"""`SessionStore` next to the journal, in one database: many runs at once, each saving as it goes."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest

from tether.execution import Executor
from tether.loop import Agent, Session
from tether.models import ScriptedModel
from tether.store import SessionStore, SqlJournal
from tether.tools import tool
from tether.types import UserMessage

pytestmark = pytest.mark.anyio

OpenJournal = Callable[[str], SqlJournal]


@tool
def book(city: str, night: int) -> str:
    """Book a night in a city."""
    return f"booked {city} for night {night}"


def booking_turn(night: int) -> str:
    return f'<tool_call>\n{{"name": "book", "arguments": {{"city": "Oslo", "night": {night}}}}}\n</tool_call>'


async def test_two_hundred_runs_sharing_the_journal_database_all_finish(
    journal_url: str, open_journal: OpenJournal
) -> None:
    journal = open_journal(journal_url)
    store = SessionStore(journal.engine)
    executor = Executor([book], journal=journal)
    failures: list[BaseException] = []

    async def one_run(number: int) -> None:
        model = ScriptedModel([*(booking_turn(night) for night in range(5)), "All five nights are booked."])
        agent = Agent(model, [book], dialect="hermes", executor=executor)
        try:
            result = await agent.run("Book five nights in Oslo", session=Session(f"trip-{number}", store))
            assert result.output == "All five nights are booked."
        except Exception as e:  # every failure is counted, not just the first
            failures.append(e)

    async with anyio.create_task_group() as group:
        for number in range(200):
            group.start_soon(one_run, number)
    assert failures == []
    assert [m.kind for m in store.load("trip-7")] == ["user", *["assistant", "tool_result"] * 5, "assistant"]
    assert sum(e.kind == "result" for e in journal.entries()) == 200 * 5


def test_appends_to_one_session_from_many_threads_keep_every_message(
    journal_url: str, open_journal: OpenJournal
) -> None:
    store = SessionStore(open_journal(journal_url).engine)

    def append(number: int) -> None:
        store.append("shared", [UserMessage(content=f"message {number}")])

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(append, range(40)))
    contents = sorted(m.content for m in store.load("shared") if isinstance(m, UserMessage))
    assert contents == sorted(f"message {number}" for number in range(40))
