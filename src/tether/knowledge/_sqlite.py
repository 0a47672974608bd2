"""The embedded default store: one SQLite file holding chunks, their BM25 index (FTS5) and their vectors.

Why SQLite: it needs no server and no package beyond Python's own; FTS5 gives BM25 over the same rows,
so a file's chunks, words and vectors change in one transaction (a crash never leaves them out of step);
and one file is easy to copy, back up and delete. It needs no SQLite extension either: sqlite-vec was the
other candidate, but common Python builds (pyenv's default, this machine's) cannot load extensions.
Vectors are float32 blobs; vector search is exact (a numpy matrix product over the namespace, cached in
memory until any connection changes the file), so its recall is 1 and its cost grows linearly with the
chunks: bench/README.md has the figures at 10k and 100k beside a numpy floor and LanceDB.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.exceptions import UserError

from ._shared import WORD, check_filter_key, chunk_rows, hits_in_order, mixed_embedders, top_k, vector_matrix
from ._store import Filter, Hit, NewChunk

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["SqliteStore"]

_SCHEMA = """
create table if not exists indexes(name text primary key, embedder text);
create table if not exists files(
    idx text not null, namespace text not null, source text not null, fingerprint text not null,
    primary key (idx, namespace, source));
create table if not exists chunks(
    rowid integer primary key, id text not null unique, idx text not null, namespace text not null,
    source text not null, content text not null, metadata text not null, vector blob);
create index if not exists chunks_by_source on chunks(idx, namespace, source);
create virtual table if not exists chunks_fts using fts5(
    content, content='chunks', content_rowid='rowid', tokenize='porter unicode61');
create trigger if not exists chunks_ai after insert on chunks begin
    insert into chunks_fts(rowid, content) values (new.rowid, new.content); end;
create trigger if not exists chunks_ad after delete on chunks begin
    insert into chunks_fts(chunks_fts, rowid, content) values ('delete', old.rowid, old.content); end;
"""


class SqliteStore:
    """Chunks, BM25 and vectors in one SQLite file (`":memory:"` for a throwaway one)."""

    def __init__(self, path: str | Path = "knowledge.db") -> None:
        self.path = str(path)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as e:
            raise UserError(f"cannot open the knowledge store {self.path}: {e}") from e
        self._db.execute("pragma journal_mode=wal")
        self._db.execute("pragma busy_timeout=10000")
        self._db.executescript(_SCHEMA)
        self._lock = threading.RLock()
        self._writes = 0
        self._matrices: dict[tuple[str, str], tuple[tuple[int, int], list[int], Any]] = {}

    # ------------------------------------------------------------------------------------------ writes

    def fingerprints(self, index: str, namespace: str) -> dict[str, str]:
        rows = self._db.execute(
            "select source, fingerprint from files where idx = ? and namespace = ?", (index, namespace)
        )
        return dict(rows.fetchall())

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
        with self._lock, self._transaction():
            if vectors is not None:
                self._claim(index, embedder)
            self._delete(index, namespace, source)
            self._db.executemany(
                "insert into chunks(id, idx, namespace, source, content, metadata, vector) values (?,?,?,?,?,?,?)",
                chunk_rows(index, namespace, source, chunks, vectors),
            )
            self._db.execute(
                "insert or replace into files(idx, namespace, source, fingerprint) values (?,?,?,?)",
                (index, namespace, source, fingerprint),
            )

    def remove(self, index: str, namespace: str, source: str) -> None:
        with self._lock, self._transaction():
            self._delete(index, namespace, source)

    def _delete(self, index: str, namespace: str, source: str) -> None:
        where = (index, namespace, source)
        self._db.execute("delete from chunks where idx = ? and namespace = ? and source = ?", where)
        self._db.execute("delete from files where idx = ? and namespace = ? and source = ?", where)
        self._writes += 1

    def _claim(self, index: str, embedder: str | None) -> None:
        known = self.embedder(index)
        if known is None:
            self._db.execute(
                "insert or replace into indexes(name, embedder) values (?, ?)", (index, embedder)
            )
        elif known != embedder:
            raise mixed_embedders(index, known, embedder)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    # ------------------------------------------------------------------------------------------- reads

    def embedder(self, index: str) -> str | None:
        row = self._db.execute("select embedder from indexes where name = ?", (index,)).fetchone()
        return None if row is None else row[0]

    def count(self, index: str, namespace: str) -> int:
        row = self._db.execute(
            "select count(*) from chunks where idx = ? and namespace = ?", (index, namespace)
        )
        return int(row.fetchone()[0])

    def lexical(self, index: str, namespace: str, query: str, k: int, where: Filter | None) -> list[Hit]:
        words = WORD.findall(query)
        if not words:
            return []
        match = " OR ".join(
            '"' + word.replace('"', "") + '"' for word in dict.fromkeys(w.lower() for w in words)
        )
        clauses, values = _filters(where)
        rows = self._db.execute(
            "select c.id, c.metadata, c.source, bm25(chunks_fts) from chunks_fts join chunks c "
            "on c.rowid = chunks_fts.rowid where chunks_fts match ? and c.idx = ? and c.namespace = ?"
            f"{clauses} order by bm25(chunks_fts) limit ?",
            (match, index, namespace, *values, k),
        )
        return [Hit(id, -score, json.loads(metadata), source) for id, metadata, source, score in rows]

    def nearest(
        self, index: str, namespace: str, vector: NDArray[np.float32], k: int, where: Filter | None
    ) -> list[Hit]:
        rowids, matrix = self._matrix(index, namespace)
        allowed = self._rowids_matching(index, namespace, where) if where else None
        return self._hits(top_k(rowids, matrix, vector, k, allowed))

    def _matrix(self, index: str, namespace: str) -> tuple[list[int], NDArray[np.float32]]:
        version = (self._writes, int(self._db.execute("pragma data_version").fetchone()[0]))
        cached = self._matrices.get((index, namespace))
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        rows = self._db.execute(
            "select rowid, vector from chunks where idx = ? and namespace = ? and vector is not null",
            (index, namespace),
        ).fetchall()
        rowids = [row[0] for row in rows]
        matrix = vector_matrix([row[1] for row in rows])
        self._matrices[(index, namespace)] = (version, rowids, matrix)
        return rowids, matrix

    def _rowids_matching(self, index: str, namespace: str, where: Filter) -> set[int]:
        clauses, values = _filters(where)
        rows = self._db.execute(
            f"select rowid from chunks c where idx = ? and namespace = ?{clauses}",
            (index, namespace, *values),
        )
        return {row[0] for row in rows}

    def _hits(self, chosen: list[tuple[int, float]]) -> list[Hit]:
        if not chosen:
            return []
        marks = ",".join("?" * len(chosen))
        rows = self._db.execute(
            f"select rowid, id, metadata, source from chunks where rowid in ({marks})", [r for r, _ in chosen]
        )
        return hits_in_order(chosen, {rowid: (id, metadata, source) for rowid, id, metadata, source in rows})

    def close(self) -> None:
        self._db.close()


def _filters(where: Filter | None) -> tuple[str, list[Any]]:
    if not where:
        return "", []
    clauses: list[str] = []
    values: list[Any] = []
    for key, value in where.items():
        clauses.append(f" and json_extract(c.metadata, '$.{check_filter_key(key)}') = ?")
        values.append(int(value) if isinstance(value, bool) else value)
    return "".join(clauses), values


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("begin immediate")

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self._db.execute("rollback" if kind is not None else "commit")
