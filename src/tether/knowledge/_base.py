"""`KnowledgeBase`: ingest files into a store, and search it by words, by meaning, or both."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from tether.exceptions import UserError

from ._embeddings import Embedder, Reranker, embedder_from_spec
from ._ingest import Chunking, IngestReport, Progress, file_chunks, file_fingerprint, ingest_files
from ._readers import Unreadable
from ._sqlite import SqliteStore
from ._store import Filter, Hit, Store
from ._tokens import default_tokenizer

__all__ = ["VECTOR_WEIGHT", "Fusion", "KnowledgeBase", "SearchMode", "fuse", "fuse_rrf", "open_store"]

SearchMode = Literal["auto", "lexical", "vector", "hybrid"]
Fusion = Literal["convex", "rrf"]

VECTOR_WEIGHT = 0.6
"""The vector side's weight in hybrid search's convex combination, chosen on the evaluation set's dev split
(docs/knowledge.md has how, and the held-out figures)."""

RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack et al. 2009): a hit's fused score is sum(1 / (60 + rank))."""

CANDIDATES = 50
"""How many hits each side of a hybrid search contributes before fusion."""


class KnowledgeBase:
    """Documents and Q&A in a store, searchable by BM25, by vector, or both fused; several indexes, each
    with namespaces.

        kb = KnowledgeBase("knowledge.db", embedder=OnnxEmbedder())
        kb.ingest(["docs/", "faq.csv"], index="kb", namespace="docs")
        kb.search("What is Ollama?", index="kb", namespace="docs")
    """

    def __init__(
        self,
        store: Store | str | Path = "knowledge.db",
        *,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        chunking: Chunking | None = None,
        user_id: str | None = None,
        user_email: str = "",
        base_url: str | None = None,
        vector_weight: float = VECTOR_WEIGHT,
        fusion: Fusion = "convex",
    ) -> None:
        """Args:
        store: A store; the path of the embedded store's SQLite file; or a `postgresql://` URL of the
            shared one.
        embedder: Embeds chunks and queries; None keeps the index lexical-only (BM25 needs no model),
            unless the index was built with one, which is then loaded from its recorded name.
        reranker: Reorders the best hits when a search asks for `rerank=True`.
        chunking: Chunk size and overlap in tokens.
        user_id: Recorded in Q&A metadata (default: the login name).
        user_email: Recorded in Q&A metadata.
        base_url: For an OpenAI-compatible embedder loaded from an index's recorded name.
        vector_weight: Hybrid search's weight on the vector side, from 0 (lexical only) to 1 (vector only).
        fusion: How hybrid search fuses: `convex`, a weighted sum of min-max normalised scores (Bruch et
            al. 2023), or `rrf`, reciprocal rank fusion (Cormack et al. 2009), which ignores scores and
            `vector_weight`.
        """
        _check_weight(vector_weight)
        if fusion not in ("convex", "rrf"):
            raise UserError(f"fusion is 'convex' or 'rrf', not {fusion!r}")
        self.store: Store = store if not isinstance(store, str | Path) else open_store(store)
        self.embedder = embedder
        self.reranker = reranker
        self.chunking = chunking or Chunking()
        self._user = (user_id, user_email)
        self._base_url = base_url
        self._loaded: dict[str, Embedder] = {}
        self.vector_weight = vector_weight
        self.fusion: Fusion = fusion

    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        index: str = "default",
        namespace: str = "default",
        progress: Progress | None = None,
    ) -> IngestReport:
        """Ingest files and folders; unchanged files are skipped, files gone from a folder removed."""
        return ingest_files(
            self.store,
            paths,
            index=index,
            namespace=namespace,
            embedder=self._embedder_for(index, writing=True),
            chunking=self.chunking,
            user_id=self._user[0],
            user_email=self._user[1],
            progress=progress,
        )

    def ingest_bytes(
        self, name: str, data: bytes, *, source: str, index: str = "default", namespace: str = "default"
    ) -> int:
        """Ingest one file's bytes (read by the caller, e.g. through a tool's confined roots); returns its
        chunk count. Raises `UserError` naming what is wrong with the file."""
        embedder = self._embedder_for(index, writing=True)
        tokenizer = (embedder.tokenizer if embedder else None) or default_tokenizer()
        try:
            chunks = file_chunks(
                name,
                data,
                source=source,
                namespace=namespace,
                tokenizer=tokenizer,
                chunking=self.chunking,
                user_id=self._user[0],
                user_email=self._user[1],
            )
        except Unreadable as e:
            raise UserError(f"{name}: {e}") from None
        vectors = embedder.embed([c.content for c in chunks]) if embedder else None
        fingerprint = file_fingerprint(data, tokenizer, self.chunking, embedder)
        self.store.replace(
            index, namespace, source, fingerprint, chunks, vectors, embedder.name if embedder else None
        )
        return len(chunks)

    def remove(self, path: str | Path, *, index: str = "default", namespace: str = "default") -> None:
        """Forget one ingested file's chunks."""
        self.store.remove(index, namespace, str(Path(path).expanduser().resolve()))

    def search(
        self,
        query: str,
        *,
        index: str = "default",
        namespace: str = "default",
        k: int = 10,
        mode: SearchMode = "auto",
        where: Filter | None = None,
        rerank: bool = False,
    ) -> list[Hit]:
        """The `k` best chunks for `query`.

        Args:
            mode: `lexical` (BM25), `vector`, `hybrid` (both, fused as `fusion` says, by default a weighted
                sum of normalised scores), or `auto`: hybrid when the index has vectors, lexical otherwise.
            where: Metadata equality filters, e.g. `{"filename": "faq.csv"}`.
            rerank: Reorder the best `max(k, 20)` candidates with the reranker; each hit's score is then
                the reranker's (`rerank(query, hits)` reorders hits of a plain search, keeping theirs apart).
        """
        if k < 1:
            raise UserError(f"k must be at least 1, not {k}")
        if rerank and self.reranker is None:
            raise UserError("rerank=True needs a reranker: KnowledgeBase(..., reranker=OnnxReranker())")
        depth = max(k, 20) if rerank else k
        hits = self._retrieve(query, index, namespace, depth, mode, where)
        return hits[:k] if not rerank else self.rerank(query, hits)[:k]

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        """`hits` reordered by the reranker, each scored by it."""
        if self.reranker is None:
            raise UserError("reranking needs a reranker: KnowledgeBase(..., reranker=OnnxReranker())")
        scores = self.reranker.score(query, [str(h.metadata.get("content", "")) for h in hits])
        ranked = sorted(zip(scores, range(len(hits)), hits, strict=True), key=lambda t: (-t[0], t[1]))
        return [Hit(hit.id, score, hit.metadata, hit.source) for score, _, hit in ranked]

    def _retrieve(
        self, query: str, index: str, namespace: str, k: int, mode: SearchMode, where: Filter | None
    ) -> list[Hit]:
        embedder = self._embedder_for(index, writing=False)
        if mode == "auto":
            mode = "hybrid" if embedder is not None else "lexical"
        if mode == "lexical":
            return self.store.lexical(index, namespace, query, k, where)
        if embedder is None:
            raise UserError(
                f"index {index!r} has no vectors: ingest it with an embedder, or search it with mode='lexical'"
            )
        vector = embedder.embed([query])[0]
        if mode == "vector":
            return self.store.nearest(index, namespace, vector, k, where)
        depth = max(k, CANDIDATES)
        lexical = self.store.lexical(index, namespace, query, depth, where)
        nearest = self.store.nearest(index, namespace, vector, depth, where)
        if self.fusion == "rrf":
            return fuse_rrf([lexical, nearest])[:k]
        return fuse(lexical, nearest, vector_weight=self.vector_weight)[:k]

    def _embedder_for(self, index: str, *, writing: bool) -> Embedder | None:
        recorded = self.store.embedder(index)
        if self.embedder is not None:
            if recorded is not None and recorded != self.embedder.name:
                raise UserError(
                    f"index {index!r} was built with {recorded!r}, not {self.embedder.name!r}: use that embedder, "
                    "or another index"
                )
            return self.embedder
        if recorded is None:
            return None
        if recorded not in self._loaded:
            self._loaded[recorded] = embedder_from_spec(recorded, base_url=self._base_url)
        return self._loaded[recorded]

    def close(self) -> None:
        self.store.close()


def open_store(where: str | Path) -> Store:
    """The shared PostgreSQL store for a `postgresql://` URL, else the embedded SQLite store at that path."""
    if str(where).startswith(("postgresql://", "postgresql+psycopg://", "postgres://")):
        from ._postgres import PostgresStore

        return PostgresStore(str(where))
    return SqliteStore(where)


def fuse(lexical: list[Hit], vector: list[Hit], *, vector_weight: float = VECTOR_WEIGHT) -> list[Hit]:
    """Convex combination of normalised scores (Bruch, Gai and Ingber, "An Analysis of Fusion Functions for
    Hybrid Retrieval", ACM TOIS 2023): each hit scores `(1 - w) * lexical + w * vector`, each side's scores
    min-max normalised over the hits it returned (its best 1, its worst 0); a hit one side did not return
    gets that side's 0, as if it ranked last. Ties keep the order of first appearance, lexical first."""
    _check_weight(vector_weight)
    scores: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for ranking, weight in ((lexical, 1.0 - vector_weight), (vector, vector_weight)):
        for hit, normalised in zip(ranking, _min_max([h.score for h in ranking]), strict=True):
            scores[hit.id] = scores.get(hit.id, 0.0) + weight * normalised
            first.setdefault(hit.id, hit)
    order = sorted(scores, key=lambda id: -scores[id])
    return [Hit(id, scores[id], first[id].metadata, first[id].source) for id in order]


def _check_weight(vector_weight: float) -> None:
    if not 0.0 <= vector_weight <= 1.0:  # NaN too
        raise UserError(f"vector_weight is a weight from 0 to 1, not {vector_weight}")


def _min_max(scores: list[float]) -> list[float]:
    """Scores mapped onto 0..1 (best 1, worst 0); all equal (or one) map to 1: each is that side's best."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    return [1.0 if high == low else (s - low) / (high - low) for s in scores]


def fuse_rrf(rankings: list[list[Hit]], k: int = RRF_K) -> list[Hit]:
    """Reciprocal rank fusion: each hit scores sum(1 / (k + rank)) over the rankings it appears in."""
    scores: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (k + rank)
            first.setdefault(hit.id, hit)
    order = sorted(scores, key=lambda id: -scores[id])
    return [Hit(id, scores[id], first[id].metadata, first[id].source) for id in order]
