"""The scheduling handlers' logic (seed 002), each taking the acting user from the principal, never from
the model: propose slots to a counterpart, and confirm one with a two-phase booking."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tether.exceptions import NeedsInput, ToolError
from tether.packs.perin._calendars import Interval
from tether.packs.perin._network import PROPOSE, READ, WRITE_AUTO, WRITE_CONFIRM, Connection, Network, User
from tether.packs.perin._resolve import resolve_counterpart
from tether.packs.perin._slots import free_slots, parse_instant, time_window, utc_seconds
from tether.types import ErrorCode

__all__ = ["acting_user", "confirm_meeting", "schedule_meeting"]

DEFAULT_WINDOW = timedelta(days=3)
LONGEST_WINDOW = timedelta(days=14)


def acting_user(network: Network, principal: str | None) -> User:
    """The network member the call is made for; anyone else is `UNAUTHORIZED`."""
    user = network.user(principal)
    if user is None:
        raise ToolError(
            ErrorCode.UNAUTHORIZED,
            "This conversation is not signed in as a member of the Perin network.",
            recoverable=False,
            suggestion="Tell the user to sign in to Perin; do not retry.",
        )
    return user


def schedule_meeting(
    network: Network,
    user: User,
    counterpart: str,
    duration_mins: int | None,
    start_window: str | None,
    end_window: str | None,
    tz_hint: str | None,
) -> dict[str, Any]:
    connection = resolve_counterpart(counterpart, network.connections_of(user.id))
    _require(connection, (READ, PROPOSE), "propose meeting times to")
    if duration_mins is None:
        raise NeedsInput(durationMins=True)
    zone_name = tz_hint or user.timezone
    zone = _zone(zone_name)
    window = _window(network, start_window, end_window, zone)
    other = connection.counterpart
    busy = [
        *network.calendar(user.id).busy(user.id, *window),
        *network.calendar(other.id).busy(other.id, *window),
    ]
    slots = free_slots(window, duration_mins * 60, busy, (user.hours, other.hours))
    if not slots:
        raise ToolError(
            "NO_COMMON_SLOTS",
            f"{other.name} and the user have no {duration_mins}-minute slot free inside "
            f"{_span(window, zone)} within both working days.",
            suggestion="Tell the user and offer a wider window, another day or a shorter meeting.",
        )
    session_id = network.create_session(user, connection, duration_mins, zone_name, slots)
    proposals = [time_window(*slot, zone) for slot in slots]
    listed = ", ".join(p["start"][11:16] for p in proposals)
    network.say(session_id, user.id, f"Proposed {duration_mins} minutes at {listed} ({zone_name}).")
    network.notify(
        other.id,
        "meeting_proposed",
        f"{user.name} proposes a {duration_mins}-minute meeting: {listed} ({zone_name}).",
        session_id=session_id,
        actionable=True,
    )
    network.audit(user.id, "schedule_meeting", "proposed", session=session_id, counterpart=other.id)
    return {
        "sessionId": session_id,
        "proposals": proposals,
        "counterpartUserId": other.id,
        "connectionId": connection.id,
        "durationMins": duration_mins,
    }


def confirm_meeting(
    network: Network,
    user: User,
    session_id: str,
    selection_index: int | None,
    start: str | None,
    end: str | None,
) -> dict[str, Any]:
    session = network.session(session_id)
    if session is None or user.id not in (session.initiator_id, session.counterpart_id):
        # someone else's session is reported exactly as a missing one: ids are not an oracle
        raise ToolError(
            ErrorCode.NOT_FOUND,
            "The user has no meeting session with that id.",
            suggestion="Use the sessionId network_schedule_meeting returned in this conversation; never make one up.",
        )
    zone = ZoneInfo(session.timezone)
    other_id = session.counterpart_id if user.id == session.initiator_id else session.initiator_id
    connection = next((c for c in network.connections_of(user.id) if c.counterpart.id == other_id), None)
    if connection is None or connection.status != "active":
        who = connection.counterpart.name if connection is not None else "them"
        raise ToolError(
            ErrorCode.CONNECTION_INACTIVE,
            f"Your connection with {who} is no longer active.",
            recoverable=False,
            suggestion="Tell the user the connection must be active again before booking.",
        )
    if session.initiator_id == user.id:  # the counterpart accepting on their own calendar needs no grant
        _require(connection, (), "book meetings with", any_of=(WRITE_CONFIRM, WRITE_AUTO))
    slot = _selected(session.proposals, selection_index, start, end, zone)
    if not network.move_session(session_id, "proposed", "confirming"):
        raise _already(network, session_id)
    try:
        booked = _book(network, (user.id, other_id), slot, session_id)
    except Exception as e:  # a calendar provider failed part way: both calendars were rolled back
        network.move_session(session_id, "confirming", "proposed")
        network.audit(user.id, "confirm_meeting", "rolled_back", session=session_id, error=type(e).__name__)
        raise ToolError(
            "CALENDAR_UNAVAILABLE",
            "A calendar could not be reached while booking; nothing was booked.",
            suggestion="Tell the user booking failed for now and offer to try again in a minute.",
        ) from e
    if not booked:
        network.move_session(session_id, "confirming", "proposed")
        network.audit(user.id, "confirm_meeting", "rolled_back", session=session_id, slot=list(slot))
        raise ToolError(
            ErrorCode.CONFLICT,
            f"{time_window(*slot, zone)['start']} is no longer free on both calendars; nothing was booked.",
            suggestion="Tell the user and offer another of the proposed times.",
        )
    now = network.now_s()
    network.move_session(
        session_id, "confirming", "confirmed", booked_start_s=slot[0], booked_end_s=slot[1], confirmed_s=now
    )
    when = time_window(*slot, zone)
    network.say(session_id, user.id, f"Confirmed {when['start']} - {when['end']}.")
    network.notify(
        other_id, "meeting_confirmed", f"Meeting confirmed for {when['start']}.", session_id=session_id
    )
    network.audit(user.id, "confirm_meeting", "confirmed", session=session_id, slot=list(slot))
    return {
        "sessionId": session_id,
        "status": "confirmed",
        "meeting": when,
        "timeToConfirmS": now - session.created_s,
    }


def _book(network: Network, people: tuple[str, str], slot: Interval, session_id: str) -> bool:
    """Phase one holds the slot on both calendars (each hold re-checks free/busy as it is made); phase two
    commits both. If a calendar refuses (`False`) or fails (its exception, re-raised), every hold already
    made or committed is released: both or neither."""
    holds: list[tuple[str, str]] = []
    try:
        for person in people:
            hold = network.calendar(person).hold(person, slot, "Meeting (Perin)", session_id)
            if hold is None:
                _release(network, holds)
                return False
            holds.append((person, hold))
        for holder, made in holds:
            network.calendar(holder).commit(made)
    except Exception:
        _release(network, holds)
        raise
    return True


def _release(network: Network, holds: list[tuple[str, str]]) -> None:
    for holder, made in holds:
        with contextlib.suppress(Exception):  # the rollback of one calendar must not stop the other's
            network.calendar(holder).release(made)


def _already(network: Network, session_id: str) -> ToolError:
    session = network.session(session_id)
    state = (
        "already confirmed" if session is not None and session.status == "confirmed" else "being confirmed"
    )
    return ToolError(
        ErrorCode.CONFLICT,
        f"This meeting is {state}; it was not booked again.",
        suggestion="Do not confirm again: tell the user the meeting is (being) booked.",
    )


def _require(
    connection: Connection, scopes: tuple[str, ...], doing: str, *, any_of: tuple[str, ...] = ()
) -> None:
    missing = [s for s in scopes if s not in connection.scopes]
    if any_of and not connection.scopes.intersection(any_of):
        missing.append(" or ".join(any_of))
    if missing:
        raise ToolError(
            ErrorCode.SCOPES_MISSING,
            f"{connection.counterpart.name} has not allowed the user to {doing} them (missing: {', '.join(missing)}).",
            recoverable=False,
            suggestion=f"Tell the user to ask {connection.counterpart.name} to grant {', '.join(missing)}.",
        )


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(
            ErrorCode.INVALID_ARGS,
            f"tzHint {name!r} is not an IANA time zone.",
            suggestion="Pass an IANA name such as 'Asia/Jerusalem' for Israel time, or leave tzHint out.",
        ) from None


def _window(network: Network, start: str | None, end: str | None, zone: ZoneInfo) -> Interval:
    now = network.clock()
    first = parse_instant(start, zone) if start else now
    if first is None:
        raise _bad_time("startWindow", start)
    last = parse_instant(end, zone) if end else first + DEFAULT_WINDOW
    if last is None:
        raise _bad_time("endWindow", end)
    if last <= first or last - first > LONGEST_WINDOW:
        raise ToolError(
            ErrorCode.INVALID_ARGS,
            "endWindow must be after startWindow, and the window at most 14 days long.",
            suggestion="Ask the user when the meeting may happen and pass that window.",
        )
    if last <= now:
        raise ToolError(
            ErrorCode.INVALID_ARGS,
            "The window is in the past.",
            suggestion="Check the date: 'tomorrow' is relative to today; pass a future window.",
        )
    return utc_seconds(max(first, now)), utc_seconds(last)


def _bad_time(field: str, value: str | None) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_ARGS,
        f"{field} {value!r} is not an ISO 8601 date-time.",
        suggestion=f"Pass {field} like 2026-11-24T12:00:00 (with tzHint for the zone).",
    )


def _selected(
    proposals: list[Interval], index: int | None, start: str | None, end: str | None, zone: ZoneInfo
) -> Interval:
    if index is not None:
        if 0 <= index < len(proposals):
            return proposals[index]
        raise ToolError(
            ErrorCode.INVALID_ARGS,
            f"selectionIndex {index} is not one of the {len(proposals)} proposals (0-{len(proposals) - 1}).",
            suggestion="Pick the index of the proposal the user chose.",
        )
    first = parse_instant(start, zone) if start else None
    last = parse_instant(end, zone) if end else None
    if first is not None and last is not None and (utc_seconds(first), utc_seconds(last)) in proposals:
        return utc_seconds(first), utc_seconds(last)
    raise ToolError(
        ErrorCode.INVALID_ARGS,
        "Give selectionIndex, or start and end of one of the session's proposals.",
        suggestion="Confirm one of the proposed times exactly as network_schedule_meeting returned it.",
    )


def _span(window: Interval, zone: ZoneInfo) -> str:
    shown = time_window(*window, zone)
    return f"{shown['start'][:16].replace('T', ' ')} - {shown['end'][11:16]} ({zone.key})"
