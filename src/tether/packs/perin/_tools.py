"""`perin_pack`: seed 002's five tools over a `Network`, each acting for the call's principal only."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from tether.exceptions import ToolError
from tether.packs.perin._network import Network
from tether.packs.perin._scheduling import acting_user, confirm_meeting, schedule_meeting
from tether.tools import ToolContext, Toolset, tool
from tether.types import ErrorCode, RateLimit

__all__ = ["RATE_LIMIT", "perin_pack"]

RATE_LIMIT = RateLimit(calls=20, per_seconds=60)
"""Per user and per tool, kept in the network's database (seed 002: rate limits stay server-enforced)."""


def perin_pack(network: Network, *, rate_limit: RateLimit = RATE_LIMIT) -> Toolset:
    """The network tools (seed 002): `network_schedule_meeting`, `network_confirm_meeting`,
    `notifications_list`, `notifications_resolve` and `integrations_connect`.

    The acting user is the run's principal (`Principal(id=<user id>)`); no tool takes a user id.
    """

    @tool(name="network_schedule_meeting", rate_limit=rate_limit, category="network")
    def network_schedule_meeting(
        ctx: ToolContext,
        counterpart: str,
        durationMins: Annotated[int, Field(ge=5, le=240)] | None = None,
        startWindow: str | None = None,
        endWindow: str | None = None,
        tzHint: str | None = None,
    ) -> dict[str, Any]:
        """Start a negotiation session and propose slots to a counterpart.

        Args:
            counterpart: Human name or email mentioned by the user (e.g., 'Aviad').
            durationMins: Meeting length in minutes; leave it out if the user did not say (you will be told to ask).
            startWindow: ISO start of candidate window (optional).
            endWindow: ISO end of candidate window (optional).
            tzHint: IANA timezone when user mentions 'Israel time' etc. (optional).
        """
        user = acting_user(network, ctx.principal)
        with network.auditing(user.id, "schedule_meeting"):
            return schedule_meeting(network, user, counterpart, durationMins, startWindow, endWindow, tzHint)

    @tool(
        name="network_confirm_meeting",
        rate_limit=rate_limit,
        category="network",
        idempotency_fields=("sessionId",),  # one confirmation per session and user: another is CONFLICT
    )
    def network_confirm_meeting(
        ctx: ToolContext,
        sessionId: str,
        selectionIndex: Annotated[int, Field(ge=0)] | None = None,
        start: str | None = None,
        end: str | None = None,
    ) -> dict[str, Any]:
        """Book one of a session's proposed times on both calendars (two-phase: both or neither).

        Args:
            sessionId: The sessionId network_schedule_meeting returned.
            selectionIndex: Which proposal (0 is the first); or give start and end instead.
            start: ISO start of the chosen proposal.
            end: ISO end of the chosen proposal.
        """
        user = acting_user(network, ctx.principal)
        with network.auditing(user.id, "confirm_meeting"):
            return confirm_meeting(network, user, sessionId, selectionIndex, start, end)

    @tool(name="notifications_list", side_effects="none", rate_limit=rate_limit, category="notifications")
    def notifications_list(ctx: ToolContext, includeResolved: bool = False) -> dict[str, Any]:
        """The user's notifications, newest last (unresolved ones unless asked otherwise).

        Args:
            includeResolved: Include notifications already resolved.
        """
        user = acting_user(network, ctx.principal)
        found = network.notifications(user.id, include_resolved=includeResolved)
        network.audit(user.id, "notifications_list", "ok", count=len(found))
        return {
            "notifications": [
                {
                    "notificationId": n.id,
                    "kind": n.kind,
                    "message": n.message,
                    "sessionId": n.session_id,
                    "actionable": n.actionable,
                    "resolved": n.resolved,
                }
                for n in found
            ]
        }

    @tool(
        name="notifications_resolve",
        side_effects="idempotent",
        rate_limit=rate_limit,
        category="notifications",
    )
    def notifications_resolve(ctx: ToolContext, notificationId: str) -> dict[str, Any]:
        """Mark one of the user's actionable notifications resolved.

        Args:
            notificationId: The notificationId notifications_list returned.
        """
        user = acting_user(network, ctx.principal)
        changed = network.resolve_notification(user.id, notificationId)
        network.audit(
            user.id, "notifications_resolve", "not_found" if changed is None else "ok", id=notificationId
        )
        if changed is None:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                "The user has no notification with that id.",
                suggestion="Call notifications_list and use one of its notificationIds.",
            )
        return {"notificationId": notificationId, "resolved": True, "alreadyResolved": not changed}

    @tool(name="integrations_connect", side_effects="none", rate_limit=rate_limit, category="integrations")
    def integrations_connect(ctx: ToolContext, type: Literal["google_calendar"]) -> dict[str, Any]:
        """Start connecting one of the user's accounts (e.g. their Google Calendar) to Perin.

        Args:
            type: Which integration.
        """
        user = acting_user(network, ctx.principal)
        network.audit(user.id, "integrations_connect", "started", type=type)
        return {
            "type": type,
            "status": "action_required",
            "action": "Sign in to Google and allow calendar access: run `tether auth google` (or open the link the app shows).",
        }

    tools = (
        network_schedule_meeting,
        network_confirm_meeting,
        notifications_list,
        notifications_resolve,
        integrations_connect,
    )
    return Toolset(*tools)
