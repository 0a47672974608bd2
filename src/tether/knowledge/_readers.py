"""Reading one file into what ingestion chunks: a text document (with its front matter) or Q&A rows.

`.txt`/`.md` (YAML front matter between `---` lines becomes `file_<key>` metadata), `.csv` Q&A (`q`, `a`,
optional `created_at`, `last_edited_at`), `.pdf` (pypdf) and `.html`/`.htm` (BeautifulSoup). A file that
cannot be read raises `Unreadable` with one sentence naming what is wrong and what to do.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

import yaml

__all__ = ["SUFFIXES", "Document", "QARow", "Unreadable", "read_file", "too_large"]

SUFFIXES = (".txt", ".md", ".markdown", ".csv", ".pdf", ".html", ".htm")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)


class Unreadable(Exception):
    """The file cannot be ingested; the message says why and what to do."""


@dataclass(frozen=True)
class Document:
    """A text document: its text, and its front matter as `file_<key>` string fields."""

    text: str
    fields: dict[str, str] = field(default_factory=dict[str, str])


@dataclass(frozen=True)
class QARow:
    row_number: int
    q: str
    a: str
    created_at: str | None = None
    last_edited_at: str | None = None


def read_file(name: str, data: bytes, *, max_bytes: int) -> Document | list[QARow]:
    """Read the bytes of the file called `name` (its suffix says the format)."""
    suffix = name[name.rfind(".") :].lower() if "." in name else ""
    if suffix not in SUFFIXES:
        raise Unreadable(
            f"unsupported file type {suffix or '(none)'!r}; tether ingests {', '.join(SUFFIXES)}"
        )
    if len(data) > max_bytes:
        raise Unreadable(too_large(len(data), max_bytes))
    if suffix == ".pdf":
        return _pdf(data)
    text = _utf8(data)
    if suffix == ".csv":
        return _qa_rows(text)
    if suffix in (".html", ".htm"):
        return _html(text)
    return _front_matter(text)


def too_large(size: int, max_bytes: int) -> str:
    return f"too large ({size:,} bytes; the limit is {max_bytes:,}): split it, or raise max_file_bytes"


def _utf8(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise Unreadable("a binary file, not text (it holds NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise Unreadable(
            f"not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}): convert it to UTF-8"
        ) from None


def _front_matter(text: str) -> Document:
    match = _FRONT_MATTER.match(text)
    if match is None:
        return Document(text)
    try:
        loaded: Any = yaml.safe_load(match.group(1))
    except yaml.YAMLError as e:
        raise Unreadable(f"its YAML front matter is not valid YAML: {str(e).splitlines()[0]}") from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise Unreadable("its front matter must be a YAML mapping (key: value lines between --- lines)")
    mapping = cast("dict[Any, Any]", loaded)
    return Document(text[match.end() :], {f"file_{key}": _as_text(value) for key, value in mapping.items()})


def _as_text(value: Any) -> str:
    """Seed 004's front-matter fields are strings: lists become `a, b`, dates ISO 8601, the rest JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in cast("list[Any]", value)):
        return ", ".join(str(v) for v in cast("list[Any]", value))
    if isinstance(value, dt.date):
        return value.isoformat()
    return json.dumps(value, default=str)


def _qa_rows(text: str) -> list[QARow]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        rows = list(reader)
    except csv.Error as e:
        raise Unreadable(f"malformed CSV at line {reader.line_num}: {e}") from None
    if not rows:
        raise Unreadable("an empty CSV: Q&A files need a header row with q and a columns")
    header = [column.strip() for column in rows[0]]
    if "q" not in header or "a" not in header:
        raise Unreadable(f"a Q&A CSV needs columns named q and a; its header is {','.join(header)!r}")
    column = {
        name: header.index(name) for name in ("q", "a", "created_at", "last_edited_at") if name in header
    }
    out: list[QARow] = []
    for number, row in enumerate(rows[1:], start=1):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header) or len(row) <= max(column["q"], column["a"]):
            raise Unreadable(
                f"malformed CSV: row {number} has {len(row)} fields, the header has {len(header)} "
                "(quote fields holding commas)"
            )
        row = row + [""] * (len(header) - len(row))  # left-out optional columns at the end are empty
        q, a = row[column["q"]].strip(), row[column["a"]].strip()
        if not q or not a:
            raise Unreadable(f"row {number} has an empty {'q' if not q else 'a'}")
        optional = {
            name: row[column[name]].strip() or None
            for name in ("created_at", "last_edited_at")
            if name in column
        }
        out.append(QARow(number, q, a, **optional))
    if not out:
        raise Unreadable("the CSV has a header but no Q&A rows")
    return out


def _pdf(data: bytes) -> Document:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise Unreadable("an encrypted PDF: decrypt it first")
        text = "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except (PdfReadError, ValueError, KeyError, TypeError) as e:
        raise Unreadable(f"not a readable PDF ({e})") from None
    if not text.strip():
        raise Unreadable("the PDF has no text layer (a scan?): run OCR on it first")
    title = reader.metadata.title if reader.metadata else None
    return Document(text, {"file_title": str(title)} if title else {})


def _html(text: str) -> Document:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")
    for hidden in soup(["script", "style", "noscript", "template", "head"]):
        if hidden.name != "head":
            hidden.decompose()
    title = soup.title.get_text(strip=True) if soup.title else ""
    if soup.head:
        soup.head.decompose()
    lines = (line.strip() for line in soup.get_text("\n").splitlines())
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return Document(body, {"file_title": title} if title else {})
