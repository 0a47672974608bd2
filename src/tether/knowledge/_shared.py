"""What the SQLite and PostgreSQL stores share, whatever their SQL dialect: the rows a file's chunks are
written as, the vector matrix read back from them, exact search over it, the hits it yields in order, query
words, filter keys, and the refusal to mix embedders in one index."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from tether.exceptions import UserError

from ._store import Hit, NewChunk

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "FILTER_KEY",
    "WORD",
    "check_filter_key",
    "chunk_rows",
    "hits_in_order",
    "mixed_embedders",
    "top_k",
    "vector_matrix",
]

K = TypeVar("K")

FILTER_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
WORD = re.compile(r"[^\W_]+", re.UNICODE)
"""A query's words for lexical search: everything else (FTS syntax, quotes, SQL) is dropped."""


def check_filter_key(key: str) -> str:
    if not FILTER_KEY.match(key):
        raise UserError(f"filter keys are metadata field names such as filename or file_tags, not {key!r}")
    return key


def top_k(
    keys: Sequence[K],
    matrix: NDArray[np.float32],
    vector: NDArray[np.float32],
    k: int,
    allowed: Collection[K] | None,
) -> list[tuple[K, float]]:
    """The `k` keys whose rows have the highest dot product with `vector`, best first (only `allowed` ones)."""
    import numpy as np

    if not keys:
        return []
    if vector.shape[-1] != matrix.shape[1]:
        raise UserError(
            f"the query vector has {vector.shape[-1]} dimensions and the index {matrix.shape[1]}: "
            "search it with the embedder it was built with"
        )
    scores = matrix @ vector.astype(np.float32)
    if allowed is not None:
        keep = np.fromiter((key in allowed for key in keys), dtype=bool, count=len(keys))
        scores = np.where(keep, scores, -np.inf)
    top = min(k, len(keys))
    best = np.argpartition(-scores, top - 1)[:top]
    best = best[np.argsort(-scores[best], kind="stable")]
    return [(keys[int(i)], float(scores[i])) for i in best if np.isfinite(scores[i])]


def chunk_rows(
    index: str, namespace: str, source: str, chunks: Sequence[NewChunk], vectors: NDArray[np.float32] | None
) -> list[tuple[Any, ...]]:
    """The rows (id, index, namespace, source, content, metadata JSON, float32 vector bytes or None) that
    store a file's chunks; one vector per chunk, or a `UserError` before anything is written."""
    if vectors is not None and len(vectors) != len(chunks):
        raise UserError(f"{source}: {len(chunks)} chunks but {len(vectors)} vectors: the embedder lost some")
    return [
        (
            c.id,
            index,
            namespace,
            source,
            c.content,
            json.dumps(c.metadata),
            None if vectors is None else vectors[i].astype("<f4").tobytes(),
        )
        for i, c in enumerate(chunks)
    ]


def vector_matrix(blobs: Sequence[bytes]) -> NDArray[np.float32]:
    """The stored float32 vectors, one row each (a 0 x 0 matrix for none)."""
    import numpy as np

    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)


def hits_in_order(chosen: Sequence[tuple[K, float]], found: Mapping[K, tuple[str, Any, str]]) -> list[Hit]:
    """Hits in `chosen`'s order and scores, from each key's (id, metadata as JSON text or dict, source);
    keys no longer found (removed since the matrix was read) are left out."""
    return [
        Hit(found[key][0], score, _metadata(found[key][1]), found[key][2])
        for key, score in chosen
        if key in found
    ]


def _metadata(stored: Any) -> dict[str, Any]:
    return json.loads(stored) if isinstance(stored, str) else dict(stored)


def mixed_embedders(index: str, known: str | None, embedder: str | None) -> UserError:
    return UserError(
        f"index {index!r} holds vectors from {known!r}, not {embedder!r}: search and ingest it with "
        f"{known!r}, or ingest into a new index (--index)"
    )
