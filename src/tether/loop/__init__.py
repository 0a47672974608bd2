"""The agent loop: models, termination policies, streaming execution and one event stream."""

from tether.loop._agent import Agent as Agent
from tether.loop._conversation import unanswered_calls as unanswered_calls
from tether.loop._core import core_tools as core_tools
from tether.loop._limits import Limits as Limits
from tether.loop._modes import Mode as Mode
from tether.loop._modes import ModeChooser as ModeChooser
from tether.loop._modes import actionable_intent as actionable_intent
from tether.loop._result import RunResult as RunResult
from tether.loop._session import Session as Session
from tether.loop._termination import Continue as Continue
from tether.loop._termination import End as End
from tether.loop._termination import EndTurn as EndTurn
from tether.loop._termination import FinalResponse as FinalResponse
from tether.loop._termination import Judge as Judge
from tether.loop._termination import NoCalls as NoCalls
from tether.loop._termination import Termination as Termination
from tether.loop._termination import TurnResult as TurnResult
from tether.loop._termination import Verdict as Verdict

__all__ = [
    "Agent",
    "Continue",
    "End",
    "EndTurn",
    "FinalResponse",
    "Judge",
    "Limits",
    "Mode",
    "ModeChooser",
    "NoCalls",
    "RunResult",
    "Session",
    "Termination",
    "TurnResult",
    "Verdict",
    "actionable_intent",
    "core_tools",
    "unanswered_calls",
]
