"""Fitting text into a model's token budget.

tether loads no tokenizer here (tiktoken fetches its vocabularies from the network on first use, which
servers often cannot do), so tokens are estimated as one per four characters, rounded up: OpenAI's rule of
thumb for English, and high for most other text, which keeps a result inside the budget more often than
not. The estimate is named `approxTokens` wherever it is reported.
"""

from __future__ import annotations

__all__ = ["CHARS_PER_TOKEN", "approx_tokens"]

CHARS_PER_TOKEN = 4


def approx_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)
