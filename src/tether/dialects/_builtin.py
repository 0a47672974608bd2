"""Registers tether's built-in dialects through the public extension point, as a plugin would."""

from __future__ import annotations

from tether.dialects._registry import register_dialect
from tether.dialects.anthropic import Anthropic
from tether.dialects.fenced import Fenced
from tether.dialects.gemini import Gemini
from tether.dialects.hermes import Hermes
from tether.dialects.json_calls import JsonCalls
from tether.dialects.openai import OpenAI
from tether.dialects.pythonic import Olmo3Pythonic, Pythonic
from tether.dialects.yaml import Yaml

for _dialect in (
    Anthropic(),
    Fenced(),
    Gemini(),
    Hermes(),
    JsonCalls(),
    Olmo3Pythonic(),
    OpenAI(),
    Pythonic(),
    Yaml(),
):
    register_dialect(_dialect)
