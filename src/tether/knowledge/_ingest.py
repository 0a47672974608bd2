"""Ingestion: files -> chunks with seed 004's metadata -> a store, one file per transaction.

A file is re-ingested only when its fingerprint changed (its bytes, and the chunking and embedder that
shape its chunks); a file that went away from an ingested folder loses its chunks. Each unreadable file
gets one error in the report and the rest go on. A file is stored whole or not at all, so an ingest that is
interrupted resumes where it stopped: the files done are unchanged the next time, and are skipped.
"""

from __future__ import annotations

import getpass
import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.exceptions import UserError
from tether.types import QAMetadata, TextDocumentMetadata

from ._embeddings import Embedder
from ._readers import SUFFIXES, Document, QARow, Unreadable, read_file, too_large
from ._store import NewChunk, Store
from ._tokens import Tokenizer, default_tokenizer

__all__ = [
    "Chunking",
    "IngestReport",
    "Progress",
    "chunk_text",
    "file_chunks",
    "file_fingerprint",
    "ingest_files",
]

Progress = Callable[[str, int, int], None]
"""Called before each file: (its path, files done, files in all)."""


@dataclass(frozen=True)
class Chunking:
    """How documents are cut: windows of `tokens` tokens, each sharing `overlap` tokens with the last."""

    tokens: int = 200
    overlap: int = 40
    max_file_bytes: int = 20 * 1024 * 1024
    """Larger files are refused (one error each), not read."""

    def __post_init__(self) -> None:
        if self.tokens < 1 or not 0 <= self.overlap < self.tokens:
            raise UserError(
                f"chunking needs tokens >= 1 and 0 <= overlap < tokens; got {self.tokens}/{self.overlap}"
            )


@dataclass
class IngestReport:
    """What one ingest did, file by file."""

    ingested: list[str] = field(default_factory=list[str])
    unchanged: list[str] = field(default_factory=list[str])
    removed: list[str] = field(default_factory=list[str])
    failed: dict[str, str] = field(default_factory=dict[str, str])
    """File -> why it was not ingested."""
    chunks: int = 0
    """Chunks written."""


def chunk_text(text: str, tokenizer: Tokenizer, chunking: Chunking) -> list[tuple[str, int]]:
    """`text` cut into windows of tokens with overlap: (content, tokens) each, blank windows dropped."""
    spans = tokenizer.spans(text)
    out: list[tuple[str, int]] = []
    step = chunking.tokens - chunking.overlap
    for start in range(0, max(len(spans), 1), step):
        window = spans[start : start + chunking.tokens]
        if not window:
            break
        content = text[window[0][0] : window[-1][1]].strip()
        if content:
            out.append((content, len(window)))
        if start + chunking.tokens >= len(spans):
            break
    return out


def ingest_files(
    store: Store,
    paths: Iterable[str | Path],
    *,
    index: str,
    namespace: str,
    embedder: Embedder | None,
    chunking: Chunking,
    user_id: str | None = None,
    user_email: str = "",
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest files and folders (recursively, by suffix) into `store`; see the module docstring."""
    files, folders = _expand(paths)
    report = IngestReport()
    known = store.fingerprints(index, namespace)
    tokenizer = (embedder.tokenizer if embedder else None) or default_tokenizer()
    for done, path in enumerate(files):
        if progress:
            progress(str(path), done, len(files))
        source = str(path)
        try:
            size = path.stat().st_size
            if size > chunking.max_file_bytes:  # refused before reading: a huge file never fills memory
                report.failed[source] = too_large(size, chunking.max_file_bytes)
                continue
            data = path.read_bytes()
        except OSError as e:
            report.failed[source] = f"cannot read it: {e.strerror or e}"
            continue
        fingerprint = file_fingerprint(data, tokenizer, chunking, embedder)
        if known.get(source) == fingerprint:
            report.unchanged.append(source)
            continue
        try:
            chunks = file_chunks(
                path.name,
                data,
                source=source,
                namespace=namespace,
                tokenizer=tokenizer,
                chunking=chunking,
                user_id=user_id,
                user_email=user_email,
            )
        except Unreadable as e:
            report.failed[source] = str(e)
            continue
        vectors = embedder.embed([c.content for c in chunks]) if embedder and chunks else None
        store.replace(
            index, namespace, source, fingerprint, chunks, vectors, embedder.name if embedder else None
        )
        report.ingested.append(source)
        report.chunks += len(chunks)
    present = {str(f) for f in files}
    for source in known:
        if source not in present and any(Path(source).is_relative_to(folder) for folder in folders):
            store.remove(index, namespace, source)
            report.removed.append(source)
    if progress:
        progress("", len(files), len(files))
    return report


def file_fingerprint(data: bytes, tokenizer: Tokenizer, chunking: Chunking, embedder: Embedder | None) -> str:
    """What decides a file's chunks: its bytes, the tokenizer and window that cut it, the model that embeds it."""
    shape = f"{tokenizer.name}/{chunking.tokens}/{chunking.overlap}/{embedder.name if embedder else '-'}"
    return hashlib.sha256(data + shape.encode()).hexdigest()


def file_chunks(
    name: str,
    data: bytes,
    *,
    source: str,
    namespace: str,
    tokenizer: Tokenizer,
    chunking: Chunking,
    user_id: str | None = None,
    user_email: str = "",
) -> list[NewChunk]:
    """The chunks of one file's bytes, with seed 004's metadata (raises `Unreadable`)."""
    read = read_file(name, data, max_bytes=chunking.max_file_bytes)
    stamp = str(int(time.time() * 1000))
    if isinstance(read, Document):
        return _document_chunks(name, read, source, namespace, tokenizer, chunking, stamp)
    return _qa_chunks(name, read, source, namespace, user_id or getpass.getuser(), user_email, stamp)


def _document_chunks(
    name: str,
    doc: Document,
    source: str,
    namespace: str,
    tokenizer: Tokenizer,
    chunking: Chunking,
    stamp: str,
) -> list[NewChunk]:
    pieces = chunk_text(doc.text, tokenizer, chunking)
    if not pieces:
        raise Unreadable("it holds no text")
    chunks: list[NewChunk] = []
    for number, (content, tokens) in enumerate(pieces, start=1):
        metadata = TextDocumentMetadata(
            filename=name,
            chunkId=number,
            content=content,
            chunkSizeTokens=tokens,
            uploadTimestamp=stamp,
            chunkNumber=number,
            totalChunks=len(pieces),
            **doc.fields,
        )
        chunks.append(NewChunk(_chunk_id(namespace, source, number), content, metadata.model_dump()))
    return chunks


def _qa_chunks(
    name: str, rows: Sequence[QARow], source: str, namespace: str, user_id: str, user_email: str, stamp: str
) -> list[NewChunk]:
    chunks: list[NewChunk] = []
    for row in rows:
        content = f"Q: {row.q}\nA: {row.a}"
        metadata: dict[str, Any] = QAMetadata(
            row_number=row.row_number,
            q=row.q,
            a=row.a,
            content=content,
            filename=name,
            user_id=user_id,
            user_email=user_email,
            upload_timestamp=stamp,
            created_at=row.created_at,
            last_edited_at=row.last_edited_at,
        ).model_dump(exclude_none=True)
        chunks.append(NewChunk(_chunk_id(namespace, source, row.row_number), content, metadata))
    return chunks


def _chunk_id(namespace: str, source: str, number: int) -> str:
    return hashlib.sha256(f"{namespace}\0{source}\0{number}".encode()).hexdigest()[:32]


def _expand(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    files: list[Path] = []
    folders: list[Path] = []
    for given in paths:
        path = Path(given).expanduser().resolve()
        if path.is_dir():
            folders.append(path)
            files.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file() and p.suffix.lower() in SUFFIXES and not _hidden(p, path)
                )
            )
        elif path.exists():
            files.append(path)
        else:
            raise UserError(f"no such file or folder: {given}")
    return list(dict.fromkeys(files)), folders


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)
