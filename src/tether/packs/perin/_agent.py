"""`perin_agent`: Perin's assistant for one network member, planner -> executor -> responder (seed 002)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from tether.execution import Executor, Policy, Principal, Recorder
from tether.loop import Agent, Limits, actionable_intent
from tether.models import Model
from tether.packs.perin._network import Network
from tether.packs.perin._tools import perin_pack
from tether.store import Journal

if TYPE_CHECKING:
    from tether.serve import ServedAgent

__all__ = ["SYSTEM_PROMPT", "perin_agent", "perin_served_agent"]

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
        user_id: The member the agent acts for: the principal of every call, never a tool argument (for
            anyone else every tool answers `UNAUTHORIZED`).
        planner: A model with native tool calling, e.g. `"openai:gpt-4o-mini"`.
        responder: The model that writes the reply, often larger, e.g. `"openai:gpt-4o"`.
        recorders: Told about every call, e.g. a `PerinMetrics`.
        limits: The loop's limits (default: tether's).
    """
    user = network.user(user_id)
    name, timezone = (user.name, user.timezone) if user is not None else ("a signed-out visitor", "UTC")
    today = network.clock().astimezone(ZoneInfo(timezone)).strftime("%A %Y-%m-%d")
    executor = Executor(
        perin_pack(network),
        policy=Policy(require_principal=True),
        journal=network.journal,
        recorders=recorders,
    )
    return Agent(
        planner,
        executor=executor,
        system_prompt=SYSTEM_PROMPT.format(name=name, today=today, timezone=timezone),
        principal=Principal(id=user_id),
        mode=actionable_intent,
        responder=responder,
        limits=limits,
    )


ModelSource = Model | str | Callable[[], Model]
"""A model, a name, or a function making a fresh model for each run (e.g. a `ScriptedModel` in tests)."""


def perin_served_agent(
    network: Network,
    *,
    planner: ModelSource,
    responder: ModelSource,
    name: str = "perin",
    recorders: tuple[Recorder, ...] = (),
) -> ServedAgent:
    """The Perin assistant for `tether serve` (`create_app(ServeConfig(agents=[...]))`): each run acts for
    the principal its API key stands for, who must be a network member (`Network.add_user(user_id=...)`).
    Needs the `serve` extra."""
    from tether.serve import ServedAgent

    def build(principal: Principal, journal: Journal) -> Agent:
        assert principal.id is not None, "tether serve always names the caller"
        return perin_agent(
            network, principal.id, planner=_made(planner), responder=_made(responder), recorders=recorders
        )

    return ServedAgent(name, build, "Perin: schedules meetings with your connections (seed 002)")


def _made(source: ModelSource) -> Model | str:
    return source if isinstance(source, Model | str) else source()
