"""Exact vector search over a matrix of L2-normalised rows: what both stores run after loading vectors."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, TypeVar

from tether.exceptions import UserError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["FILTER_KEY", "WORD", "check_filter_key", "top_k"]

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
