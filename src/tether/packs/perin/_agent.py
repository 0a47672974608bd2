"""`perin_agent`: Perin's assistant for one network member, planner -> executor -> responder (seed 002)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from tether.exceptions import UserError
from tether.execution import Executor, Policy, Principal, Recorder
from tether.loop import Agent, Limits, actionable_intent
from tether.models import Model
from tether.packs.perin._network import Network
from tether.packs.perin._tools import perin_pack

__all__ = ["SYSTEM_PROMPT", "perin_agent"]

SYSTEM_PROMPT = """You are Perin, {name}'s assistant on a network where people's assistants schedule with each other.
Today is {today} in {timezone}, the user's time zone.

Tool use:
- Prefer tools for actionable intents (scheduling, coordination, notifications): act, then report.
- Never fabricate IDs. Pass people as the names or emails the user said; the server resolves them securely.
  Use only sessionIds and notificationIds that tools returned in this conversation.
- If information is missing, leave the field out of the call: the tool answers with `needs`; ask one concise
  clarifying question, and call the tool again once the user answers.
- Respect time zones explicitly: give startWindow/endWindow as ISO local times and, when the user names a
  region ("Israel time"), set tzHint to its IANA zone (Asia/Jerusalem).
- After actions, summarise what you did and what happens next in two or three sentences. When a tool
  refuses, explain it plainly (no codes or ids) and say what the user can do."""


def perin_agent(
    network: Network,
    user_id: str,
    *,
    planner: Model | str,
    responder: Model | str,
    recorders: tuple[Recorder, ...] = (),
    limits: Limits | None = None,
) -> Agent:
    """The Perin assistant acting for `user_id`: the planner calls the network tools (its text is never
    shown), the executor enforces the guardrails, and the responder streams the reply; actionable requests
    act first. Planner and responder stand in for each other when one fails (tether.loop's fallback).

    Args:
        network: The network (and journal) to act on.
        user_id: The member the agent acts for: the principal of every call, never a tool argument.
        planner: A model with native tool calling, e.g. `"openai:gpt-4o-mini"`.
        responder: The model that writes the reply, often larger, e.g. `"openai:gpt-4o"`.
        recorders: Told about every call, e.g. a `PerinMetrics`.
        limits: The loop's limits (default: tether's).
    """
    user = network.user(user_id)
    if user is None:
        raise UserError(
            f"perin_agent: no member {user_id!r} in the network; add them with Network.add_user()."
        )
    today = network.clock().astimezone(ZoneInfo(user.timezone)).strftime("%A %Y-%m-%d")
    executor = Executor(
        perin_pack(network),
        policy=Policy(require_principal=True),
        journal=network.journal,
        recorders=recorders,
    )
    return Agent(
        planner,
        executor=executor,
        system_prompt=SYSTEM_PROMPT.format(name=user.name, today=today, timezone=user.timezone),
        principal=Principal(id=user.id),
        mode=actionable_intent,
        responder=responder,
        limits=limits,
    )
