"""The `perin` pack: seed 002's scheduling network, and a ready agent for its members.

    from tether.packs.perin import Network, perin_agent

    network = Network("sqlite:///perin.db")          # or postgresql+psycopg://...; the journal shares it
    me = network.add_user("Dana", "dana@example.com", "Asia/Jerusalem")
    aviad = network.add_user("Aviad Cohen", "aviad@example.com", "Asia/Jerusalem")
    network.connect(me, aviad)                       # both ways, every calendar scope
    agent = perin_agent(network, me, planner="openai:gpt-4o-mini", responder="openai:gpt-4o")
    agent.run_sync("Set a 30-minute meeting with Aviad tomorrow between 12:00-14:00 Israel time")

It is written only against tether's public API, as a reference for domain packs: the acting user is the
run's `Principal`, never a tool argument; every refusal is an envelope the model can act on (`ToolError`,
`NeedsInput`); repeats and races are settled by the executor's idempotency and by compare-and-set in the
database; rate limits are the executor's, kept in the same database; and the pack registers through the
`tether.tool_packs` entry point like any third-party pack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tether.packs.perin._pack import PERIN_PACK as PERIN_PACK

if TYPE_CHECKING:
    from tether.packs.perin._agent import SYSTEM_PROMPT as SYSTEM_PROMPT
    from tether.packs.perin._agent import perin_agent as perin_agent
    from tether.packs.perin._agent import perin_served_agent as perin_served_agent
    from tether.packs.perin._calendars import CalendarAdapter as CalendarAdapter
    from tether.packs.perin._calendars import Interval as Interval
    from tether.packs.perin._calendars import LocalCalendar as LocalCalendar
    from tether.packs.perin._google import GoogleCalendar as GoogleCalendar
    from tether.packs.perin._network import ALL_SCOPES as ALL_SCOPES
    from tether.packs.perin._network import Connection as Connection
    from tether.packs.perin._network import Network as Network
    from tether.packs.perin._network import Notification as Notification
    from tether.packs.perin._network import User as User
    from tether.packs.perin._slots import WorkingHours as WorkingHours
    from tether.packs.perin._telemetry import PerinMetrics as PerinMetrics
    from tether.packs.perin._tools import RATE_LIMIT as RATE_LIMIT
    from tether.packs.perin._tools import perin_pack as perin_pack

_EXPORTS: dict[str, str] = {
    "ALL_SCOPES": "tether.packs.perin._network",
    "CalendarAdapter": "tether.packs.perin._calendars",
    "Connection": "tether.packs.perin._network",
    "GoogleCalendar": "tether.packs.perin._google",
    "Interval": "tether.packs.perin._calendars",
    "LocalCalendar": "tether.packs.perin._calendars",
    "Network": "tether.packs.perin._network",
    "Notification": "tether.packs.perin._network",
    "PerinMetrics": "tether.packs.perin._telemetry",
    "RATE_LIMIT": "tether.packs.perin._tools",
    "SYSTEM_PROMPT": "tether.packs.perin._agent",
    "User": "tether.packs.perin._network",
    "WorkingHours": "tether.packs.perin._slots",
    "perin_agent": "tether.packs.perin._agent",
    "perin_served_agent": "tether.packs.perin._agent",
    "perin_pack": "tether.packs.perin._tools",
}

__all__ = [
    "ALL_SCOPES",
    "PERIN_PACK",
    "RATE_LIMIT",
    "SYSTEM_PROMPT",
    "CalendarAdapter",
    "Connection",
    "GoogleCalendar",
    "Interval",
    "LocalCalendar",
    "Network",
    "Notification",
    "PerinMetrics",
    "User",
    "WorkingHours",
    "perin_agent",
    "perin_pack",
    "perin_served_agent",
]


def __getattr__(name: str) -> Any:
    """Load the network (and SQLAlchemy) on first use: listing tether's packs imports this package."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'tether.packs.perin' has no attribute {name!r}")
