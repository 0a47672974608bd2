"""Models: providers behind one small interface, and test doubles that stream as a provider would."""

from tether.models._anthropic import AnthropicModel as AnthropicModel
from tether.models._base import Model as Model
from tether.models._base import ModelChunk as ModelChunk
from tether.models._base import ModelRequest as ModelRequest
from tether.models._cassette import RecordingModel as RecordingModel
from tether.models._cassette import load_cassette as load_cassette
from tether.models._openai import OpenAIModel as OpenAIModel
from tether.models._resolve import model_from_name as model_from_name
from tether.models._test import FunctionModel as FunctionModel
from tether.models._test import ScriptedModel as ScriptedModel

__all__ = [
    "AnthropicModel",
    "FunctionModel",
    "Model",
    "ModelChunk",
    "ModelRequest",
    "OpenAIModel",
    "RecordingModel",
    "ScriptedModel",
    "load_cassette",
    "model_from_name",
]
