"""network_confirm_meeting: two-phase booking on both calendars, once, whatever repeats or races it."""

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from tether.execution import Executor, Principal, Run
from tether.packs.perin import Network, perin_pack
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

from .conftest import NOW, AnyEnvelope, People

pytestmark = pytest.mark.anyio

WINDOW: dict[str, Any] = {
    "startWindow": "2026-03-27T12:00:00",
    "endWindow": "2026-03-27T14:00:00",
    "tzHint": "Asia/Jerusalem",
}
NOON = (1774602000, 1774603800)  # 2026-03-27 12:00-12:30 +03:00, in UTC seconds


async def propose(people: People, counterpart: str = "Aviad", user: str | None = None) -> str:
    envelope = await people.call(
        "network_schedule_meeting", user=user, counterpart=counterpart, durationMins=30, **WINDOW
    )
    assert isinstance(envelope, OkEnvelope), envelope
    return envelope.data["sessionId"]


def code(envelope: object) -> str:
    assert isinstance(envelope, ErrorEnvelope), envelope
    return envelope.error.code


async def test_confirming_books_both_calendars_and_tells_aviad(people: People) -> None:
    session = await propose(people)
    envelope = await people.call("network_confirm_meeting", sessionId=session, selectionIndex=0)
    assert isinstance(envelope, OkEnvelope)
    assert envelope.data["meeting"] == {
        "start": "2026-03-27T12:00:00+03:00",
        "end": "2026-03-27T12:30:00+03:00",
    }
    assert envelope.data["status"] == "confirmed"
    assert people.network.bookings(people.dana) == [(NOON, "confirmed")]
    assert people.network.bookings(people.aviad) == [(NOON, "confirmed")]
    kinds = [n.kind for n in people.network.notifications(people.aviad)]
    assert kinds == ["meeting_proposed", "meeting_confirmed"]


async def test_a_proposal_can_be_chosen_by_its_start_and_end(people: People) -> None:
    session = await propose(people)
    chosen: dict[str, Any] = {"start": "2026-03-27T13:00:00+03:00", "end": "2026-03-27T13:30:00+03:00"}
    envelope = await people.call("network_confirm_meeting", sessionId=session, **chosen)
    assert isinstance(envelope, OkEnvelope)
    assert envelope.data["meeting"] == chosen
    # a time that was never proposed (Aviad's dentist) cannot be booked through confirm
    other = await propose(people)
    dentist: dict[str, Any] = {"start": "2026-03-27T12:30:00+03:00", "end": "2026-03-27T13:00:00+03:00"}
    assert code(await people.call("network_confirm_meeting", sessionId=other, **dentist)) == "INVALID_ARGS"
    assert (
        code(await people.call("network_confirm_meeting", sessionId=other, selectionIndex=9))
        == "INVALID_ARGS"
    )


async def test_confirming_twice_books_once(people: People) -> None:
    session = await propose(people)
    executor = people.executor()
    first = await people.call(
        "network_confirm_meeting", executor=executor, sessionId=session, selectionIndex=0
    )
    # the very same call again replays its result; another choice for the session is a conflict
    again = await people.call(
        "network_confirm_meeting", executor=executor, sessionId=session, selectionIndex=0
    )
    other = await people.call(
        "network_confirm_meeting", executor=executor, sessionId=session, selectionIndex=1
    )
    assert isinstance(first, OkEnvelope)
    assert again == first
    assert code(other) == "CONFLICT"
    # Aviad accepting the already confirmed session is told so, not booked again
    aviad = await people.call(
        "network_confirm_meeting", user=people.aviad, sessionId=session, selectionIndex=1
    )
    assert isinstance(aviad, ErrorEnvelope)
    assert aviad.error.message == "This meeting is already confirmed; it was not booked again."
    assert people.network.bookings(people.aviad) == [(NOON, "confirmed")]


def race(count: int, confirm: Callable[[int], AnyEnvelope]) -> list[AnyEnvelope]:
    """Run `confirm(i)` on `count` threads released together."""
    barrier = threading.Barrier(count)
    results: list[AnyEnvelope | None] = [None] * count

    def worker(i: int) -> None:
        barrier.wait()
        results[i] = confirm(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def confirm_in_own_process(url: str, user: str, arguments: dict[str, Any]) -> AnyEnvelope:
    """A confirm as another server process would make it: its own engine, journal and executor."""
    network = Network(url, clock=lambda: NOW)
    try:
        executor = Executor(perin_pack(network), journal=network.journal)
        call = ToolCall(
            id=f"call_{threading.get_ident()}", name="network_confirm_meeting", arguments=arguments
        )
        return asyncio.run(executor.execute(call, Run(principal=Principal(id=user), session_id=user)))
    finally:
        network.close()


async def test_racing_confirms_of_one_session_book_once(people: People, database_url: str) -> None:
    session = await propose(people)
    # Dana confirming on two servers and Aviad accepting, all at once, with different choices
    users = [people.dana, people.dana, people.aviad, people.aviad]
    results = race(
        4,
        lambda i: confirm_in_own_process(
            database_url, users[i], {"sessionId": session, "selectionIndex": i % 2}
        ),
    )
    assert sorted(r.ok for r in results) == [False, False, False, True]
    assert {code(r) for r in results if not r.ok} == {"CONFLICT"}
    assert len(people.network.bookings(people.dana)) == 1
    assert len(people.network.bookings(people.aviad)) == 1


async def test_racing_sessions_for_the_same_time_book_it_once_and_roll_the_losers_back(
    people: People, database_url: str
) -> None:
    # Dana and three others each propose noon to Aviad, then all confirm at once from their own servers
    users = [people.dana]
    for n in range(3):
        other = people.network.add_user(f"Lee {n}", f"lee{n}@example.com", "Asia/Jerusalem")
        people.network.connect(other, people.aviad)
        users.append(other)
    sessions = [await propose(people, "Aviad Cohen", user=user) for user in users]
    results = race(
        len(users),
        lambda i: confirm_in_own_process(
            database_url, users[i], {"sessionId": sessions[i], "selectionIndex": 0}
        ),
    )
    assert sorted(r.ok for r in results) == [False, False, False, True]
    assert {code(r) for r in results if not r.ok} == {"CONFLICT"}
    assert people.network.bookings(people.aviad) == [(NOON, "confirmed")]
    # the losers' holds on their own calendars were released: one booking in all
    assert sum(len(people.network.bookings(user)) for user in users) == 1
    # and a loser's session can still be confirmed at another proposed time
    loser = next(i for i, r in enumerate(results) if not r.ok)
    retry = await people.call(
        "network_confirm_meeting", user=users[loser], sessionId=sessions[loser], selectionIndex=1
    )
    assert isinstance(retry, OkEnvelope)


async def test_a_slot_taken_after_the_proposal_is_refused_and_nothing_is_held(people: People) -> None:
    session = await propose(people)
    from .conftest import tomorrow

    people.network.add_busy(people.aviad, tomorrow(12), tomorrow(12, 15), "Call")
    envelope = await people.call("network_confirm_meeting", sessionId=session, selectionIndex=0)
    assert code(envelope) == "CONFLICT"
    assert people.network.bookings(people.dana) == []  # Dana's hold rolled back
    trail = [(action, outcome) for _, action, outcome, _ in people.network.audit_trail(people.dana)]
    assert trail[-2:] == [("confirm_meeting", "rolled_back"), ("confirm_meeting", "refused")]


async def test_another_users_session_is_not_found(people: People) -> None:
    session = await propose(people)
    # Mallory (a member, not in the session) tries to confirm it, or to book on Aviad's calendar
    envelope = await people.call(
        "network_confirm_meeting", user=people.mallory, sessionId=session, selectionIndex=0
    )
    assert code(envelope) == "NOT_FOUND"
    made_up = await people.call("network_confirm_meeting", sessionId="0" * 32, selectionIndex=0)
    assert code(made_up) == "NOT_FOUND"
    assert people.network.bookings(people.aviad) == []


async def test_confirming_needs_a_write_scope_and_an_active_connection(people: People) -> None:
    session = await propose(people)
    people.network.update_connection(
        people.dana, people.aviad, scopes=["calendar.availability.read", "calendar.events.propose"]
    )
    assert (
        code(await people.call("network_confirm_meeting", sessionId=session, selectionIndex=0))
        == "SCOPES_MISSING"
    )
    people.network.update_connection(
        people.dana, people.aviad, scopes=["calendar.events.write.auto"], status="revoked"
    )
    refused = await people.call("network_confirm_meeting", sessionId=session, selectionIndex=0)
    assert code(refused) == "CONNECTION_INACTIVE"
    people.network.update_connection(people.dana, people.aviad, status="active")
    assert (await people.call("network_confirm_meeting", sessionId=session, selectionIndex=0)).ok


async def test_the_counterpart_cannot_accept_over_a_connection_they_paused(people: People) -> None:
    session = await propose(people)
    people.network.update_connection(people.aviad, people.dana, status="paused")
    envelope = await people.call(
        "network_confirm_meeting", user=people.aviad, sessionId=session, selectionIndex=0
    )
    assert code(envelope) == "CONNECTION_INACTIVE"
    people.network.update_connection(people.aviad, people.dana, status="active")
    accepted = await people.call(
        "network_confirm_meeting", user=people.aviad, sessionId=session, selectionIndex=0
    )
    assert isinstance(accepted, OkEnvelope)
    assert people.network.bookings(people.dana) == [(NOON, "confirmed")]
