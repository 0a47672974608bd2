"""Knowledge stores: ingest throughput and query latency at 10k and 100k chunks.

tether's embedded store (SQLite: FTS5 BM25 + exact vector search in numpy) beside the floor of exact
search (a numpy matrix product over vectors already in memory) and a peer embedded store, LanceDB, both
exact (flat) and through its approximate IVF-PQ index, whose recall@10 against exact search is measured;
and tether's hybrid search (BM25 and exact vectors, fused) through `KnowledgeBase.search`.
Embedding time is left out (vectors are given): this measures the stores. Vectors are 384-dimensional
(MiniLM's size), clustered round 500 centres as real embeddings are; each chunk is 40 words of a
5,000-word vocabulary with Zipf frequencies. Run: `make bench ONLY=knowledge` (or `SIZES=10000`).
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from tether.knowledge import KnowledgeBase, NewChunk, SqliteStore, Tokenizer

T = TypeVar("T")
DIM = 384
QUERIES = 200
FILE_CHUNKS = 100
SIZES = [int(s) for s in os.environ.get("SIZES", "10000,100000").split(",")]
rng = np.random.default_rng(7)
VOCAB = [f"w{i}" for i in range(5000)]
_RANKS = 1 / np.arange(1, len(VOCAB) + 1)
ZIPF = _RANKS / _RANKS.sum()


def corpus(n: int) -> tuple[list[str], NDArray[np.float32]]:
    centres = rng.normal(size=(500, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, 500, n)] + 0.35 * rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    words: NDArray[np.int64] = rng.choice(len(VOCAB), size=(n, 40), p=ZIPF)
    return [" ".join(VOCAB[int(w)] for w in row) for row in words.tolist()], vectors


def queries(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    picked = vectors[rng.integers(0, len(vectors), QUERIES)] + 0.2 * rng.normal(size=(QUERIES, DIM)).astype(
        np.float32
    )
    return picked / np.linalg.norm(picked, axis=1, keepdims=True)


def percentiles(samples: list[float]) -> str:
    ms = np.array(samples) * 1000
    return f"{np.percentile(ms, 50):8.2f} {np.percentile(ms, 99):8.2f}"


def timed(run: Callable[[T], list[Any]], inputs: Iterable[T]) -> tuple[list[float], list[list[Any]]]:
    samples: list[float] = []
    results: list[list[Any]] = []
    for item in inputs:
        start = time.perf_counter()
        results.append(run(item))
        samples.append(time.perf_counter() - start)
    return samples, results


def recall(found: list[list[Any]], exact: list[list[Any]]) -> float:
    return float(np.mean([len(set(f) & set(e)) / len(e) for f, e in zip(found, exact, strict=True)]))


class Given:
    """An embedder whose query vectors are given (embedding time is left out, as for the stores)."""

    name = "bench"
    tokenizer: Tokenizer | None = None

    def __init__(self, vectors: dict[str, NDArray[np.float32]]) -> None:
        self.vectors = vectors

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return np.stack([self.vectors[t] for t in texts])


def bench(n: int, folder: Path) -> None:
    texts, vectors = corpus(n)
    ids = [f"c{i}" for i in range(n)]
    asked = queries(vectors)
    words: list[str] = [" ".join(str(w) for w in rng.choice(VOCAB[:2000], 3)) for _ in range(QUERIES)]
    print(f"\n{n:,} chunks ({DIM} dims)")
    print(f"{'store / operation':46} {'chunks/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'recall@10':>9}")

    store = SqliteStore(folder / f"tether-{n}.db")
    start = time.perf_counter()
    for first in range(0, n, FILE_CHUNKS):
        chunks = [
            NewChunk(ids[i], texts[i], {"content": texts[i]})
            for i in range(first, min(n, first + FILE_CHUNKS))
        ]
        store.replace(
            "bench", "ns", f"file{first}", "x", chunks, vectors[first : first + FILE_CHUNKS], "bench"
        )
    rate = n / (time.perf_counter() - start)
    print(f"{'tether SQLite: ingest (100-chunk files)':46} {rate:10.0f}")

    def floor_search(q: NDArray[np.float32]) -> list[Any]:
        scores = vectors @ q
        best = np.argpartition(-scores, 9)[:10]
        return [int(i) for i in best[np.argsort(-scores[best])]]

    floor, exact = timed(floor_search, list(asked))
    exact_ids: list[list[Any]] = [[ids[i] for i in row] for row in exact]
    print(f"{'floor: numpy exact (vectors in memory)':46} {'':>10} {percentiles(floor)} {1.0:9.3f}")
    store.nearest(
        "bench", "ns", asked[0], 10, None
    )  # loads the matrix once, as the first query of a process does

    def tether_vector(q: NDArray[np.float32]) -> list[Any]:
        return [h.id for h in store.nearest("bench", "ns", q, 10, None)]

    def tether_lexical(text: str) -> list[Any]:
        return [h.id for h in store.lexical("bench", "ns", text, 10, None)]

    samples, found = timed(tether_vector, list(asked))
    print(
        f"{'tether SQLite: vector (exact)':46} {'':>10} {percentiles(samples)} {recall(found, exact_ids):9.3f}"
    )
    samples, _ = timed(tether_lexical, words)
    print(f"{'tether SQLite: lexical (FTS5 BM25)':46} {'':>10} {percentiles(samples)}")

    kb = KnowledgeBase(store, embedder=Given(dict(zip(words, asked, strict=True))))

    def tether_hybrid(text: str) -> list[Any]:
        return [h.id for h in kb.search(text, index="bench", namespace="ns", k=10, mode="hybrid")]

    samples, _ = timed(tether_hybrid, words)
    print(f"{'tether SQLite: hybrid (BM25 + exact, fused)':46} {'':>10} {percentiles(samples)}")
    store.close()

    lancedb: Any = importlib.import_module("lancedb")  # the peer, from the bench group; partly untyped
    pa: Any = importlib.import_module("pyarrow")

    db = lancedb.connect(str(folder / f"lance-{n}"))
    start = time.perf_counter()
    table: Any = None
    for first in range(0, n, FILE_CHUNKS):
        batch = pa.table(
            {
                "id": ids[first : first + FILE_CHUNKS],
                "text": texts[first : first + FILE_CHUNKS],
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors[first : first + FILE_CHUNKS].ravel()), DIM
                ),
            }
        )
        table = db.create_table("chunks", batch) if table is None else table
        if first:
            table.add(batch)
    rate = n / (time.perf_counter() - start)
    print(f"{'LanceDB: ingest (100-chunk appends)':46} {rate:10.0f}")

    def lance(q: NDArray[np.float32], **options: Any) -> list[str]:
        search = table.search(q).metric("cosine").limit(10)
        for name, value in options.items():
            search = getattr(search, name)(value)
        return [row["id"] for row in search.select(["id", "_distance"]).to_list()]

    samples, found = timed(lance, list(asked))
    print(
        f"{'LanceDB: vector (flat, exact)':46} {'':>10} {percentiles(samples)} {recall(found, exact_ids):9.3f}"
    )
    start = time.perf_counter()
    IvfPq: Any = importlib.import_module("lancedb.index").IvfPq  # the bench group may not be installed

    table.create_index(
        "vector",
        config=IvfPq(distance_type="cosine", num_partitions=max(16, int(n**0.5) // 2), num_sub_vectors=48),
    )
    built = time.perf_counter() - start
    print(f"LanceDB: IVF-PQ index built in {built:.0f} s")

    for nprobes, refine in ((40, 20), (40, 100), (160, 100)):

        def lance_ann(q: NDArray[np.float32], nprobes: int = nprobes, refine: int = refine) -> list[Any]:
            return lance(q, nprobes=nprobes, refine_factor=refine)

        samples, found = timed(lance_ann, list(asked))
        label = f"LanceDB: IVF-PQ nprobes {nprobes}, refine {refine}"
        print(f"{label:46} {'':>10} {percentiles(samples)} {recall(found, exact_ids):9.3f}")


if __name__ == "__main__":
    where = Path(tempfile.mkdtemp(prefix="tether-bench-knowledge-"))
    try:
        for size in SIZES:
            bench(size, where)
    finally:
        shutil.rmtree(where, ignore_errors=True)
