"""Registers tether's built-in dialects through the public extension point, as a plugin would."""

from __future__ import annotations

from tether.dialects._registry import register_dialect
from tether.dialects.anthropic import Anthropic
from tether.dialects.auto import Auto
from tether.dialects.deepseek import DeepSeekR1, DeepSeekV3, DeepSeekV31
from tether.dialects.families import FAMILIES
from tether.dialects.fenced import Fenced
from tether.dialects.functionary import FunctionaryV31, FunctionaryV32
from tether.dialects.gemini import Gemini
from tether.dialects.gemma4 import Gemma4
from tether.dialects.glm45 import Glm45
from tether.dialects.harmony import Harmony
from tether.dialects.hermes import Hermes
from tether.dialects.json_calls import ToolCallsJson
from tether.dialects.json_objects import JsonToolList, Llama3Json, Xlam
from tether.dialects.kimi_k2 import KimiK2
from tether.dialects.mistral import Mistral
from tether.dialects.openai import OpenAI
from tether.dialects.pythonic import Olmo3Pythonic, Pythonic
from tether.dialects.qwen3_coder_xml import Qwen3CoderXml
from tether.dialects.reka import Reka
from tether.dialects.yaml import Yaml

BUILTIN = (
    Anthropic(),
    DeepSeekR1(),
    DeepSeekV3(),
    DeepSeekV31(),
    Fenced(),
    FunctionaryV31(),
    FunctionaryV32(),
    Gemini(),
    Gemma4(),
    Glm45(),
    Harmony(),
    Hermes(),
    ToolCallsJson(),
    JsonToolList(),
    KimiK2(),
    Llama3Json(),
    Mistral(),
    Olmo3Pythonic(),
    OpenAI(),
    Pythonic(),
    Qwen3CoderXml(),
    Reka(),
    Xlam(),
    Yaml(),
)
for _dialect in (*BUILTIN, *FAMILIES):
    register_dialect(_dialect)
register_dialect(Auto())  # after the dialects it chooses among
