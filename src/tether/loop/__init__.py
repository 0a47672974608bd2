"""The agent loop: models, termination policies, streaming execution and one event stream."""

from tether.loop._agent import Agent as Agent
from tether.loop._agent import RunResult as RunResult
from tether.loop._core import core_tools as core_tools
from tether.loop._termination import EndTurn as EndTurn
from tether.loop._termination import FinalResponse as FinalResponse
from tether.loop._termination import Limits as Limits
from tether.loop._termination import NoCalls as NoCalls
from tether.loop._termination import Termination as Termination

__all__ = ["Agent", "EndTurn", "FinalResponse", "Limits", "NoCalls", "RunResult", "Termination", "core_tools"]
