"""`provider:name` -> a Model, from the flag, `TETHER_MODEL`, or the providers' usual key variables."""

from __future__ import annotations

import os

from tether.exceptions import UserError
from tether.models._anthropic import AnthropicModel
from tether.models._base import Model
from tether.models._openai import OpenAIModel

__all__ = ["HOW_TO_CONFIGURE", "model_from_name"]

HOW_TO_CONFIGURE = """No model is configured. Pick one of:
  --model openai:gpt-4o-mini              (with OPENAI_API_KEY set)
  --model openai:qwen2.5:7b --base-url http://localhost:11434/v1   (Ollama, vLLM, llama.cpp, LM Studio...)
  --model anthropic:claude-sonnet-5-5     (with ANTHROPIC_API_KEY set; pip install 'tether[anthropic]')
  export TETHER_MODEL=openai:gpt-4o-mini
Or replay a recorded session with no key and no network: tether replay FILE"""


def model_from_name(name: str | None, *, base_url: str | None = None, native_tools: bool = True) -> Model:
    """`openai:gpt-4o-mini` -> OpenAIModel, `anthropic:claude-sonnet-5-5` -> AnthropicModel.

    None looks at TETHER_MODEL, then OPENAI_API_KEY, then ANTHROPIC_API_KEY.
    """
    name = name or os.environ.get("TETHER_MODEL")
    if name is None and os.environ.get("OPENAI_API_KEY"):
        name = "openai:gpt-4o-mini"
    if name is None and os.environ.get("ANTHROPIC_API_KEY"):
        name = "anthropic:claude-sonnet-5-5"
    if name is None:
        raise UserError(HOW_TO_CONFIGURE)
    provider, _, model = name.partition(":")
    if provider == "openai" and model:
        return OpenAIModel(model, base_url=base_url, native_tools=native_tools)
    if provider == "anthropic" and model:
        return AnthropicModel(model, base_url=base_url, native_tools=native_tools)
    raise UserError(
        f"Unknown model {name!r}: use provider:name, e.g. openai:gpt-4o-mini or anthropic:claude-sonnet-5-5.\n\n{HOW_TO_CONFIGURE}"
    )
