"""Execution modes (seed 002): when the user sees the model's text, chosen per prompt by an intent heuristic."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

__all__ = ["Mode", "ModeChooser", "actionable_intent"]

Mode = Literal["talk_first", "act_first"]
"""`talk_first` streams text at once; `act_first` holds it until the turn's tools finish or need input."""

ModeChooser = Callable[[str], Mode]

_ACTIONABLE = re.compile(
    # requests to do something
    r"\b(schedule|book|send|create|set|set up|arrange|cancel|move|reschedule|confirm|invite|remind|delete|"
    r"update|add|remove|buy|order|pay|find|search|look up|download|run|deploy|file|write|save|"
    # scheduling and coordination (seed 002 acts first on these)
    r"meet|meeting|meetings|appointment|propose|negotiate|coordinate|organi[sz]e|notify|resolve|accept|"
    r"decline|connect|email)\b",
    re.IGNORECASE,
)


def actionable_intent(prompt: str) -> Mode:
    """The default heuristic: act first for requests to do something and for scheduling and coordination
    (seed 002), talk first for conversation."""
    return "act_first" if _ACTIONABLE.search(prompt) else "talk_first"
