"""Models: providers behind one small interface, and test doubles that stream as a provider would.

A model streams typed events (`ModelChunk`): `TextChunk`, `ReasoningChunk`, `ToolCallChunk` and
`ToolCallDone` (native tool calls), `Usage` and `Finish`. Providers make them from their wire format; the test
doubles make them from the text, provider JSON or `ToolCall`s they are given.
"""

from tether._model_events import Finish as Finish
from tether._model_events import ModelChunk as ModelChunk
from tether._model_events import ReasoningChunk as ReasoningChunk
from tether._model_events import TextChunk as TextChunk
from tether._model_events import ToolCallChunk as ToolCallChunk
from tether._model_events import ToolCallDone as ToolCallDone
from tether._model_events import Usage as Usage
from tether.models._anthropic import AnthropicModel as AnthropicModel
from tether.models._base import Model as Model
from tether.models._base import ModelRequest as ModelRequest
from tether.models._cassette import RecordingModel as RecordingModel
from tether.models._cassette import load_cassette as load_cassette
from tether.models._openai import OpenAIModel as OpenAIModel
from tether.models._resolve import model_from_name as model_from_name
from tether.models._test import FunctionModel as FunctionModel
from tether.models._test import ScriptedModel as ScriptedModel

__all__ = [
    "AnthropicModel",
    "Finish",
    "FunctionModel",
    "Model",
    "ModelChunk",
    "ModelRequest",
    "OpenAIModel",
    "ReasoningChunk",
    "RecordingModel",
    "ScriptedModel",
    "TextChunk",
    "ToolCallChunk",
    "ToolCallDone",
    "Usage",
    "load_cassette",
    "model_from_name",
]
