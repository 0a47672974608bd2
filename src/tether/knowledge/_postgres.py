"""A store a team shares: PostgreSQL, which tether's journal already runs on (`postgres` extra, psycopg).

Words are ranked by PostgreSQL's own full-text search (`ts_rank_cd` over an English `tsvector`: cover
density, not BM25); vectors are float32 `bytea`. Vector search is exact, in numpy, over the namespace's
vectors, cached per process and reloaded when any writer (another person's ingest too) bumped the
namespace's version. pgvector would move it into the server, but no package of it installs here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tether.exceptions import UserError

from ._shared import WORD, check_filter_key, chunk_rows, hits_in_order, mixed_embedders, top_k, vector_matrix
from ._store import Filter, Hit, NewChunk

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["PostgresStore"]

_SCHEMA = """
create table if not exists tether_knowledge_indexes(name text primary key, embedder text);
create table if not exists tether_knowledge_versions(
    idx text, namespace text, version bigint not null, primary key (idx, namespace));
create table if not exists tether_knowledge_files(
    idx text, namespace text, source text, fingerprint text not null, primary key (idx, namespace, source));
create table if not exists tether_knowledge_chunks(
    id text primary key, idx text not null, namespace text not null, source text not null,
    content text not null, metadata jsonb not null, vector bytea,
    words tsvector generated always as (to_tsvector('english', content)) stored);
create index if not exists tether_knowledge_by_source on tether_knowledge_chunks(idx, namespace, source);
create index if not exists tether_knowledge_words on tether_knowledge_chunks using gin(words);
"""


class PostgresStore:
    """Chunks, full-text ranking and vectors in a PostgreSQL database (`postgresql://user@host/db`)."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.url = url.replace("postgresql+psycopg://", "postgresql://")
        try:
            self._db: Any = psycopg.connect(self.url, autocommit=True)
        except psycopg.Error as e:
            raise UserError(f"cannot connect to the knowledge store at {url}: {e}") from e
        with self._db.transaction():
            self._db.execute("select pg_advisory_xact_lock(7158)")  # two first connections create it once
            self._db.execute(_SCHEMA)
        self._matrices: dict[tuple[str, str], tuple[int, list[str], Any]] = {}

    def fingerprints(self, index: str, namespace: str) -> dict[str, str]:
        rows = self._db.execute(
            "select source, fingerprint from tether_knowledge_files where idx = %s and namespace = %s",
            (index, namespace),
        )
        return {str(source): str(fingerprint) for source, fingerprint in rows}

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
        with self._db.transaction():
            if vectors is not None:
                self._claim(index, embedder)
            self._delete(index, namespace, source)
            with self._db.cursor() as cursor:
                cursor.executemany(
                    "insert into tether_knowledge_chunks(id, idx, namespace, source, content, metadata, vector) "
                    "values (%s, %s, %s, %s, %s, %s, %s)",
                    chunk_rows(index, namespace, source, chunks, vectors),
                )
            self._db.execute(
                "insert into tether_knowledge_files values (%s, %s, %s, %s) on conflict (idx, namespace, source) "
                "do update set fingerprint = excluded.fingerprint",
                (index, namespace, source, fingerprint),
            )

    def remove(self, index: str, namespace: str, source: str) -> None:
        with self._db.transaction():
            self._delete(index, namespace, source)

    def _delete(self, index: str, namespace: str, source: str) -> None:
        where = (index, namespace, source)
        self._db.execute(
            "delete from tether_knowledge_chunks where idx = %s and namespace = %s and source = %s", where
        )
        self._db.execute(
            "delete from tether_knowledge_files where idx = %s and namespace = %s and source = %s", where
        )
        self._db.execute(
            "insert into tether_knowledge_versions values (%s, %s, 1) on conflict (idx, namespace) "
            "do update set version = tether_knowledge_versions.version + 1",
            (index, namespace),
        )

    def _claim(self, index: str, embedder: str | None) -> None:
        self._db.execute(
            "insert into tether_knowledge_indexes values (%s, %s) on conflict (name) do nothing",
            (index, embedder),
        )
        known = self.embedder(index)
        if known != embedder:
            raise mixed_embedders(index, known, embedder)

    def embedder(self, index: str) -> str | None:
        row = self._db.execute(
            "select embedder from tether_knowledge_indexes where name = %s", (index,)
        ).fetchone()
        return None if row is None else row[0]

    def count(self, index: str, namespace: str) -> int:
        row = self._db.execute(
            "select count(*) from tether_knowledge_chunks where idx = %s and namespace = %s",
            (index, namespace),
        ).fetchone()
        return int(row[0])

    def lexical(self, index: str, namespace: str, query: str, k: int, where: Filter | None) -> list[Hit]:
        words = list(dict.fromkeys(w.lower() for w in WORD.findall(query)))
        if not words:
            return []
        clauses, values = _filters(where)
        rows = self._db.execute(
            "select id, metadata, source, ts_rank_cd(words, q) from tether_knowledge_chunks, "
            "to_tsquery('english', %s) q where words @@ q and idx = %s and namespace = %s"
            f"{clauses} order by 4 desc, id limit %s",
            (" | ".join(words), index, namespace, *values, k),
        )
        return [Hit(id, float(score), metadata, source) for id, metadata, source, score in rows]

    def nearest(
        self, index: str, namespace: str, vector: NDArray[np.float32], k: int, where: Filter | None
    ) -> list[Hit]:
        ids, matrix = self._matrix(index, namespace)
        allowed: set[str] | None = None
        if where:
            clauses, values = _filters(where)
            rows = self._db.execute(
                f"select id from tether_knowledge_chunks where idx = %s and namespace = %s{clauses}",
                (index, namespace, *values),
            )
            allowed = {row[0] for row in rows}
        chosen = top_k(ids, matrix, vector, k, allowed)
        if not chosen:
            return []
        rows = self._db.execute(
            "select id, metadata, source from tether_knowledge_chunks where id = any(%s)",
            ([id for id, _ in chosen],),
        )
        return hits_in_order(chosen, {id: (id, metadata, source) for id, metadata, source in rows})

    def _matrix(self, index: str, namespace: str) -> tuple[list[str], NDArray[np.float32]]:
        row = self._db.execute(
            "select version from tether_knowledge_versions where idx = %s and namespace = %s",
            (index, namespace),
        ).fetchone()
        version = 0 if row is None else int(row[0])
        cached = self._matrices.get((index, namespace))
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        rows = self._db.execute(
            "select id, vector from tether_knowledge_chunks where idx = %s and namespace = %s and vector is not null "
            "order by id",
            (index, namespace),
        ).fetchall()
        ids = [r[0] for r in rows]
        matrix = vector_matrix([r[1] for r in rows])
        self._matrices[(index, namespace)] = (version, ids, matrix)
        return ids, matrix

    def close(self) -> None:
        self._db.close()


def _filters(where: Filter | None) -> tuple[str, list[Any]]:
    if not where:
        return "", []
    clauses = [f" and metadata->>'{check_filter_key(key)}' = %s" for key in where]
    values = [str(v).lower() if isinstance(v, bool) else str(v) for v in where.values()]
    return "".join(clauses), values
