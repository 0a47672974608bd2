"""`--confirm`'s approval guard asks about calls that will run, never about a repeat the journal answers.

A domain guard runs before the idempotency guard, so a replayed call (one that already ran, answered from
the journal without running its tool) used to ask the user again. The executor now skips domain guards
for a call the journal will answer; a model that changes anything about a call (its id, an argument) makes
a new call, which is asked about; a refused approval is never recorded as a result that replays.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.cli._approval import Approval
from tether.execution import Executor, Principal, Run
from tether.store import Journal, Lookup, MemoryJournal, SqlJournal
from tether.tools import Toolset, tool
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

booked: list[str] = []
charged: list[int] = []


@tool()
async def book(room: str) -> str:
    """Book a room (changes things: asks for approval under --confirm)."""
    booked.append(room)
    return f"booked {room}"


@tool(idempotency_fields=("order_id",))
async def charge(order_id: str, cents: int) -> int:
    """Charge an order once."""
    charged.append(cents)
    return cents


@tool(side_effects="none")
async def look(room: str) -> str:
    return f"{room} is free"


class Asker:
    """The user at the terminal: answers each question with the next of `answers`, and notes it was asked."""

    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []

    def __call__(self, call: ToolCall) -> bool:
        self.asked.append((call.name, call.id))
        return self.answers.pop(0)


@pytest.fixture(autouse=True)
def _forget() -> None:  # pyright: ignore[reportUnusedFunction]
    booked.clear()
    charged.clear()


@pytest.fixture(params=["memory", "sqlite"])
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Journal]:
    """The journal written directly (in memory) and one the executor reaches through its writer."""
    if request.param == "memory":
        yield MemoryJournal()
        return
    sql = SqlJournal(f"sqlite:///{tmp_path / 'journal.db'}")
    yield sql
    sql.close()


def executor(journal: Journal, asker: Asker) -> Executor:
    return Executor(Toolset(book, charge, look), journal=journal, guards=[Approval(asker)])


def booking(call_id: str = "c1", room: str = "Green") -> ToolCall:
    return ToolCall(id=call_id, name="book", arguments={"room": room})


def code(envelope: object) -> str:
    return envelope.error.code if isinstance(envelope, ErrorEnvelope) else "ok"


async def test_a_replayed_call_is_answered_from_the_journal_without_asking_again(journal: Journal) -> None:
    asker = Asker(True)
    run = Run(principal=Principal("u1"), session_id="s1")
    ex = executor(journal, asker)
    first = await ex.execute(booking(), run)
    again = await ex.execute(booking(), run)
    assert first == again == OkEnvelope(data="booked Green")
    assert asker.asked == [("book", "c1")]  # once: the repeat ran nothing, so there was nothing to approve
    assert booked == ["Green"]


@pytest.mark.parametrize(
    "changed", [booking("c2"), booking("c1", room="Blue")], ids=["another id", "another argument"]
)
async def test_a_call_changed_in_any_way_is_a_new_call_and_asked_about(
    journal: Journal, changed: ToolCall
) -> None:
    asker = Asker(True, False)
    run = Run(principal=Principal("u1"), session_id="s1")
    ex = executor(journal, asker)
    await ex.execute(booking(), run)
    refused = await ex.execute(changed, run)
    assert code(refused) == "PERMISSION_DENIED"
    assert asker.asked == [("book", "c1"), ("book", changed.id)]
    assert booked == ["Green"]  # the model could not get the changed call run without the user's yes


async def test_a_refused_approval_is_not_a_result_that_replays(journal: Journal) -> None:
    asker = Asker(False, True)
    run = Run(principal=Principal("u1"), session_id="s1")
    ex = executor(journal, asker)
    refused = await ex.execute(booking(), run)
    assert code(refused) == "PERMISSION_DENIED"
    assert [e.kind for e in journal.entries()] == ["refusal"]
    approved = await ex.execute(booking(), run)  # the same call again: asked afresh, and runs
    assert approved == OkEnvelope(data="booked Green")
    assert asker.asked == [("book", "c1"), ("book", "c1")]
    assert booked == ["Green"]


async def test_a_call_sharing_only_its_idempotency_fields_is_refused_without_running_or_asking(
    journal: Journal,
) -> None:
    asker = Asker(True)
    run = Run(principal=Principal("u1"))
    ex = executor(journal, asker)
    paid = await ex.execute(
        ToolCall(id="c1", name="charge", arguments={"order_id": "o-1", "cents": 500}), run
    )
    more = ToolCall(id="c2", name="charge", arguments={"order_id": "o-1", "cents": 50_000})
    conflict = await ex.execute(more, run)
    assert paid == OkEnvelope(data=500)
    assert code(conflict) == "CONFLICT"  # nothing runs, so nothing to approve; the model learns nothing new
    assert asker.asked == [("charge", "c1")]
    assert charged == [500]


async def test_read_only_tools_are_never_asked_about(journal: Journal) -> None:
    asker = Asker()
    ex = executor(journal, asker)
    run = Run()
    assert await ex.execute(ToolCall(id="c1", name="look", arguments={"room": "Green"}), run) == OkEnvelope(
        data="Green is free"
    )
    assert asker.asked == []


class ForgetsBetweenLookupAndClaim(MemoryJournal):
    """A journal that changes between the executor's look and its claim (as another process sharing a
    database, or a memory journal forgetting its oldest entries, can make it): `lookup` still finds the
    earlier success, which `claim` no longer does."""

    def __init__(self) -> None:
        super().__init__()
        self.forget = False

    def lookup(self, idempotency_key: str) -> Lookup:
        found = super().lookup(idempotency_key)
        if self.forget:
            self._latest_intent.clear()
        return found


@pytest.mark.parametrize("approves", [True, False])
async def test_a_call_that_runs_after_all_is_asked_about_first(approves: bool) -> None:
    journal = ForgetsBetweenLookupAndClaim()
    asker = Asker(True, approves)
    run = Run(principal=Principal("u1"), session_id="s1")
    ex = executor(journal, asker)
    await ex.execute(booking(), run)
    journal.forget = True
    answer = await ex.execute(booking(), run)
    assert asker.asked == [("book", "c1"), ("book", "c1")]
    if approves:
        assert answer == OkEnvelope(data="booked Green")
        assert booked == ["Green", "Green"]
    else:
        assert code(answer) == "PERMISSION_DENIED"
        assert booked == ["Green"]
        # its intent was settled as not run: nothing in doubt, and the next attempt may run
        assert await ex.in_doubt() == []
        kinds = [e.kind for e in journal.entries()]
        assert kinds == ["intent", "result", "intent", "resolution", "refusal"]
        assert journal.entries()[3].envelope is None
