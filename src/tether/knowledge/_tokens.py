"""Token counting for chunking: where each token of a text starts and ends, from a real tokenizer.

The default is OpenAI's `cl100k_base` (the tokenizer of `text-embedding-3-*`), whose vocabulary the
`bpe-openai` package ships, so it works offline. A local ONNX embedder chunks with its own tokenizer instead,
so a chunk's size is counted in the tokens of the model that embeds it.
"""

from __future__ import annotations

import warnings
from functools import cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tokenizers import Tokenizer as HfTokenizerModel

__all__ = ["BpeTokenizer", "HfTokenizer", "Tokenizer", "default_tokenizer"]


class Tokenizer(Protocol):
    """What chunking needs of a tokenizer: the character span of each token of a text."""

    @property
    def name(self) -> str: ...

    def spans(self, text: str) -> list[tuple[int, int]]:
        """`[start, end)` character offsets of each token, in order."""
        ...


class BpeTokenizer:
    """A tiktoken-style byte-level BPE (`cl100k_base`, `o200k_base`) through `bpe-openai`."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.name = encoding
        with warnings.catch_warnings():  # it reads its bundled vocabulary through a deprecated importlib API
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai

            self._encoding = bpe_openai.get_encoding(encoding)
            self._encoding.decode_tokens_bytes(self._encoding.encode_ordinary("load the tables now"))

    def spans(self, text: str) -> list[tuple[int, int]]:
        pieces: list[bytes] = self._encoding.decode_tokens_bytes(self._encoding.encode_ordinary(text))
        ends: list[int] = []
        offset = 0
        for piece in pieces:
            offset += len(piece)
            ends.append(offset)
        if text.isascii():
            return list(zip([0, *ends[:-1]], ends, strict=True))
        char_at = _char_offsets(text)
        # a token may end inside a character (byte-level BPE): round its end up to the character's end
        chars = [char_at[_next_start(char_at, end)] for end in ends]
        return list(zip([0, *chars[:-1]], chars, strict=True))


class HfTokenizer:
    """A Hugging Face `tokenizers` tokenizer (e.g. an embedding model's own `tokenizer.json`)."""

    def __init__(self, tokenizer: HfTokenizerModel, name: str = "tokenizer.json") -> None:
        self.name = name
        self._tokenizer = tokenizer

    def spans(self, text: str) -> list[tuple[int, int]]:
        # no truncation here: chunking must see every token of the document
        self._tokenizer.no_truncation()
        offsets = self._tokenizer.encode(text, add_special_tokens=False).offsets
        return [(start, end) for start, end in offsets if end > start]


@cache
def default_tokenizer() -> Tokenizer:
    """`cl100k_base`, loaded once."""
    return BpeTokenizer("cl100k_base")


def _char_offsets(text: str) -> dict[int, int]:
    """UTF-8 byte offset of each character start (and of the end) -> its character offset."""
    at: dict[int, int] = {}
    offset = 0
    for index, char in enumerate(text):
        at[offset] = index
        offset += len(char.encode("utf-8"))
    at[offset] = len(text)
    return at


def _next_start(char_at: dict[int, int], byte: int) -> int:
    while byte not in char_at:
        byte += 1
    return byte
