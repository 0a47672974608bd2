"""Retrieval: BM25 on real text with no model, filters, namespaces, several indexes, fusion, hostile queries."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.exceptions import UserError
from tether.knowledge import Hit, KnowledgeBase, SqliteStore, fuse, fuse_rrf

ARCHITECTURE = Path(__file__).resolve().parents[2] / "ARCHITECTURE.md"


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    kb = KnowledgeBase(tmp_path / "k.db")
    kb.ingest([ARCHITECTURE], index="repo", namespace="docs")
    (tmp_path / "faq.csv").write_text("q,a\nHow do I install the sandbox?,apt-get install bubblewrap\n")
    kb.ingest([tmp_path / "faq.csv"], index="repo", namespace="faq")
    kb.ingest([tmp_path / "faq.csv"], index="other", namespace="docs")
    return kb


def test_lexical_search_finds_real_text_by_bm25_with_stemming_and_no_model(kb: KnowledgeBase) -> None:
    hits = kb.search("journals recording calls", index="repo", namespace="docs", k=3)
    assert hits
    assert "journal" in hits[0].metadata["content"]
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_namespaces_and_indexes_are_kept_apart(kb: KnowledgeBase) -> None:
    assert [
        h.metadata["filename"] for h in kb.search("bubblewrap sandbox", index="repo", namespace="faq")
    ] == ["faq.csv"]
    assert all(
        h.metadata["filename"] == "ARCHITECTURE.md"
        for h in kb.search("bubblewrap", index="repo", namespace="docs")
    )
    assert kb.search("journal", index="other", namespace="docs") == []
    assert kb.search("journal", index="missing", namespace="docs") == []


def test_metadata_filters_narrow_every_search(kb: KnowledgeBase) -> None:
    assert kb.search("sandbox", index="repo", namespace="faq", where={"row_number": 1})
    assert kb.search("sandbox", index="repo", namespace="faq", where={"row_number": 2}) == []
    assert kb.search("sandbox", index="repo", namespace="docs", where={"filename": "nothing.md"}) == []
    with pytest.raises(UserError, match="filter keys are metadata field names"):
        kb.search("x", index="repo", namespace="docs", where={"a') or 1=1 --": 1})


@pytest.mark.parametrize(
    "query", ['"', "NEAR(", "a AND", "*", "content:x", "-", "''); drop table chunks; --", "   "]
)
def test_queries_with_fts_syntax_or_sql_are_searched_as_words_and_never_raise(
    kb: KnowledgeBase, query: str
) -> None:
    kb.search(query, index="repo", namespace="docs")
    assert kb.search("journal", index="repo", namespace="docs")


def test_vector_search_on_a_lexical_only_index_says_how_to_get_vectors(kb: KnowledgeBase) -> None:
    with pytest.raises(UserError, match="has no vectors: ingest it with an embedder"):
        kb.search("x", index="repo", namespace="docs", mode="vector")


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    a, b, c = (Hit(id, 0.0, {}) for id in "abc")
    fused = fuse_rrf([[a, b, c], [b, c]])
    assert [h.id for h in fused] == ["b", "c", "a"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)


def test_convex_fusion_weighs_min_max_normalised_scores() -> None:
    lexical = [Hit("a", 12.0, {}), Hit("b", 7.0, {}), Hit("c", 2.0, {})]  # BM25: normalised 1, 0.5, 0
    vector = [Hit("c", 0.9, {}), Hit("b", 0.8, {}), Hit("d", 0.5, {})]  # cosine: normalised 1, 0.75, 0
    fused = fuse(lexical, vector, vector_weight=0.6)
    assert [h.id for h in fused] == ["b", "c", "a", "d"]
    assert [h.score for h in fused] == pytest.approx([0.4 * 0.5 + 0.6 * 0.75, 0.6, 0.4, 0.0])
    assert [h.id for h in fuse(lexical, vector, vector_weight=0.0)][:3] == ["a", "b", "c"]
    assert [h.id for h in fuse(lexical, vector, vector_weight=1.0)][:2] == ["c", "b"]
    assert [h.score for h in fuse([Hit("a", 3.0, {})], [], vector_weight=0.25)] == [
        0.75
    ]  # one hit: its side's best
    assert fuse([], [], vector_weight=0.5) == []


@pytest.mark.parametrize("weight", [-0.1, 1.5, float("nan")])
def test_a_vector_weight_outside_0_to_1_is_a_user_error(tmp_path: Path, weight: float) -> None:
    with pytest.raises(UserError, match="vector_weight is a weight from 0 to 1"):
        KnowledgeBase(tmp_path / "k.db", vector_weight=weight)
    with pytest.raises(UserError, match="vector_weight is a weight from 0 to 1"):
        fuse([], [], vector_weight=weight)


def test_an_unknown_fusion_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="fusion is 'convex' or 'rrf'"):
        KnowledgeBase(tmp_path / "k.db", fusion="sum")  # type: ignore[arg-type]


def test_a_store_file_that_cannot_be_opened_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot open the knowledge store"):
        SqliteStore(tmp_path / "missing" / "k.db")
