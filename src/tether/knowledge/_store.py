"""The one interface every knowledge store implements, and the records it takes and returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["Filter", "Hit", "NewChunk", "Store"]

Filter = Mapping[str, str | int | float | bool]
"""Metadata equality filters, e.g. `{"filename": "faq.csv"}`; every one must hold."""


@dataclass(frozen=True)
class NewChunk:
    """A chunk to store: its id (stable for the same file, namespace and position), text and metadata."""

    id: str
    content: str
    metadata: dict[str, Any]


@dataclass(frozen=True)
class Hit:
    """One search result: the chunk's id, its score (higher is better) and its metadata."""

    id: str
    score: float
    metadata: dict[str, Any]
    source: str = ""


class Store(Protocol):
    """Chunks by index and namespace, searchable by words (BM25) and by vector.

    Writes are per source file and atomic: a file's chunks are replaced whole, so an ingest interrupted
    midway leaves every file either as it was or as it is now.
    """

    def fingerprints(self, index: str, namespace: str) -> dict[str, str]:
        """Every stored source of the namespace -> the fingerprint it was stored with."""
        ...

    def replace(
        self,
        index: str,
        namespace: str,
        source: str,
        fingerprint: str,
        chunks: Sequence[NewChunk],
        vectors: NDArray[np.float32] | None,
        embedder: str | None,
    ) -> None:
        """Store `chunks` (and their vectors, one row each) as the whole of `source`."""
        ...

    def remove(self, index: str, namespace: str, source: str) -> None: ...

    def embedder(self, index: str) -> str | None:
        """The embedder an index's vectors came from, or None if it has none."""
        ...

    def lexical(self, index: str, namespace: str, query: str, k: int, where: Filter | None) -> list[Hit]: ...

    def nearest(
        self, index: str, namespace: str, vector: NDArray[np.float32], k: int, where: Filter | None
    ) -> list[Hit]:
        """The `k` chunks whose vectors have the highest cosine similarity to `vector` (exact search)."""
        ...

    def count(self, index: str, namespace: str) -> int: ...

    def close(self) -> None: ...
