"""Ingestion: seed 004's metadata exactly, token chunks with overlap, re-ingest by hash, bad files, resume."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest

from tether.exceptions import UserError
from tether.knowledge import BpeTokenizer, Chunking, KnowledgeBase, chunk_text
from tether.types import QAMetadata, TextDocumentMetadata

GUIDE = """---
video_title: What is Ollama?
video_url: https://youtube.com/watch?v=abc123
tags: [llm, local]
---
Ollama is an open-source tool that allows you to run large language models on your own machine.
"""

FAQ = (
    "q,a,created_at,last_edited_at\n"
    'What is the pricing for the Pro plan?,"The Pro plan costs $29/month with unlimited projects",'
    "2024-01-15T10:00:00Z,2024-01-20T15:30:00Z\n"
    "Can I cancel?,Yes: at any time.,,\n"
)


def kb_at(tmp_path: Path, **kwargs: object) -> KnowledgeBase:
    return KnowledgeBase(tmp_path / "k.db", user_id="123", user_email="admin@kalygo.io", **kwargs)  # type: ignore[arg-type]


def test_markdown_chunks_carry_seed_004_text_metadata_with_front_matter_as_file_fields(
    tmp_path: Path,
) -> None:
    (tmp_path / "ollama_guide.md").write_text(GUIDE)
    kb = kb_at(tmp_path)
    before = int(time.time() * 1000)
    kb.ingest([tmp_path / "ollama_guide.md"], index="knowledge-base", namespace="docs")
    [hit] = kb.search("Ollama", index="knowledge-base", namespace="docs")
    meta = hit.metadata
    assert TextDocumentMetadata.model_validate(meta).model_dump() == meta
    assert {k: v for k, v in meta.items() if k not in ("uploadTimestamp", "chunkSizeTokens")} == {
        "filename": "ollama_guide.md",
        "chunkId": 1,
        "content": GUIDE.split("---\n")[2].strip(),
        "chunkNumber": 1,
        "totalChunks": 1,
        "file_video_title": "What is Ollama?",
        "file_video_url": "https://youtube.com/watch?v=abc123",
        "file_tags": "llm, local",
    }
    assert meta["chunkSizeTokens"] == len(BpeTokenizer().spans(meta["content"]))
    assert isinstance(meta["uploadTimestamp"], str)
    assert before <= int(meta["uploadTimestamp"]) <= before + 60_000


def test_csv_rows_carry_seed_004_qa_metadata(tmp_path: Path) -> None:
    (tmp_path / "faq.csv").write_text(FAQ)
    kb = kb_at(tmp_path)
    kb.ingest([tmp_path / "faq.csv"], index="kb", namespace="faq")
    hits = {
        h.metadata["row_number"]: h.metadata
        for h in kb.search("Pro plan cancel", index="kb", namespace="faq")
    }
    first = hits[1]
    assert QAMetadata.model_validate(first).model_dump(exclude_none=True) == first
    assert {k: v for k, v in first.items() if k != "upload_timestamp"} == {
        "row_number": 1,
        "q": "What is the pricing for the Pro plan?",
        "a": "The Pro plan costs $29/month with unlimited projects",
        "content": "Q: What is the pricing for the Pro plan?\nA: The Pro plan costs $29/month with unlimited projects",
        "filename": "faq.csv",
        "user_id": "123",
        "user_email": "admin@kalygo.io",
        "created_at": "2024-01-15T10:00:00Z",
        "last_edited_at": "2024-01-20T15:30:00Z",
    }
    assert "created_at" not in hits[2]
    assert hits[2]["content"] == "Q: Can I cancel?\nA: Yes: at any time."


def test_documents_are_cut_into_token_windows_that_overlap() -> None:
    text = " ".join(f"word{i}" for i in range(300))
    tokenizer = BpeTokenizer()
    chunks = chunk_text(text, tokenizer, Chunking(tokens=50, overlap=10))
    assert all(tokens <= 50 for _, tokens in chunks)
    assert chunks[0][1] == 50
    assert [len(tokenizer.spans(content)) for content, _ in chunks][:-1] == [50] * (len(chunks) - 1)
    spans = tokenizer.spans(text)
    shared = text[spans[40][0] : spans[49][1]].strip()  # tokens 41-50: the last ten of the first chunk
    assert chunks[0][0].endswith(shared)
    assert chunks[1][0].startswith(shared)
    assert " ".join(c for c, _ in chunks).split()[-1] == "word299"


def test_token_spans_of_multibyte_text_cover_it_exactly() -> None:
    text = "Ünïcødé — 日本語のテキスト 🎉 done"
    spans = BpeTokenizer().spans(text)
    assert spans[0][0] == 0
    assert spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


def test_reingesting_skips_unchanged_files_replaces_changed_ones_and_drops_deleted_ones(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Alpha talks about apples.")
    (docs / "b.txt").write_text("Bravo talks about bananas.")
    kb = kb_at(tmp_path)
    first = kb.ingest([docs])
    assert (len(first.ingested), first.chunks) == (2, 2)
    again = kb.ingest([docs])
    assert (again.ingested, len(again.unchanged)) == ([], 2)
    (docs / "a.md").write_text("Alpha now talks about apricots.")
    (docs / "b.txt").unlink()
    changed = kb.ingest([docs])
    assert changed.ingested == [str(docs / "a.md")]
    assert changed.removed == [str(docs / "b.txt")]
    assert kb.search("bananas") == []
    assert kb.search("apples") == []
    assert kb.search("apricots")[0].metadata["content"] == "Alpha now talks about apricots."


def test_each_bad_file_gets_one_clear_error_and_the_rest_ingest(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("Good text about zebras.")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    (tmp_path / "broken.csv").write_text('q,a\n"unterminated,x\n')
    (tmp_path / "wrong.csv").write_text("question,answer\nx,y\n")
    (tmp_path / "huge.txt").write_text("z" * 2000)
    (tmp_path / "front.md").write_text("---\n- just\n- a list\n---\ntext")
    kb = kb_at(tmp_path, chunking=Chunking(max_file_bytes=1000))
    report = kb.ingest([tmp_path])
    assert report.ingested == [str(tmp_path / "good.md")]
    failed = {Path(p).name: why for p, why in report.failed.items()}
    assert failed == {
        "binary.txt": "a binary file, not text (it holds NUL bytes)",
        "latin1.txt": "not UTF-8 text (byte 0xe9 at offset 3): convert it to UTF-8",
        "broken.csv": "malformed CSV at line 2: unexpected end of data",
        "wrong.csv": "a Q&A CSV needs columns named q and a; its header is 'question,answer'",
        "huge.txt": "too large (2,000 bytes; the limit is 1,000): split it, or raise max_file_bytes",
        "front.md": "its front matter must be a YAML mapping (key: value lines between --- lines)",
    }
    assert kb.search("zebras")[0].metadata["filename"] == "good.md"


def test_an_interrupted_ingest_resumes_with_the_files_it_had_not_finished(tmp_path: Path) -> None:
    for n in range(5):
        (tmp_path / f"doc{n}.md").write_text(f"Document number {n} about topic{n}.")
    kb = kb_at(tmp_path)

    def interrupt(path: str, done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        kb.ingest([tmp_path], progress=interrupt)
    resumed = kb_at(tmp_path).ingest([tmp_path])
    assert [Path(p).name for p in resumed.unchanged] == ["doc0.md", "doc1.md", "doc2.md"]
    assert [Path(p).name for p in resumed.ingested] == ["doc3.md", "doc4.md"]


def test_pdf_and_html_are_read_through_their_extractors(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text(
        "<html><head><title>Pricing</title><script>var hidden = 'script text';</script></head>"
        "<body><h1>Plans</h1><p>The Team plan includes single sign-on.</p><style>p {}</style></body></html>"
    )
    (tmp_path / "manual.pdf").write_bytes(minimal_pdf("The manual explains calibration of the sensor."))
    kb = kb_at(tmp_path)
    report = kb.ingest([tmp_path])
    assert report.failed == {}
    assert len(report.ingested) == 2
    html = kb.search("single sign-on")[0].metadata
    assert (html["filename"], html["file_title"], html["content"]) == (
        "page.html", "Pricing", "Plans\nThe Team plan includes single sign-on.",
    )  # fmt: skip
    assert kb.search("hidden script") == []
    pdf = kb.search("calibration")[0].metadata
    assert pdf["filename"] == "manual.pdf"
    assert "calibration of the sensor" in pdf["content"]


def test_a_missing_path_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file or folder: nope"):
        kb_at(tmp_path).ingest(["nope"])


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF with `text` in Helvetica, offsets computed so the cross-reference table is exact."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets: list[int] = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out
