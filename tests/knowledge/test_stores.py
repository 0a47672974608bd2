"""One interface over both stores: the embedded SQLite file and a shared PostgreSQL server, run for real."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tether.exceptions import UserError
from tether.knowledge import KnowledgeBase, NewChunk, OnnxEmbedder, open_store

from .onnx_models import build_static_embedder

WORDS = ["cats", "purr", "dogs", "bark", "fish", "swim"]


def embedder(tmp_path: Path) -> OnnxEmbedder:
    table = np.zeros((len(WORDS) + 2, 3), dtype=np.float32)
    for i, vector in enumerate([[1, 0, 0], [1, 0.2, 0], [0, 1, 0], [0.2, 1, 0], [0, 0, 1], [0, 0.2, 1]]):
        table[i + 2] = vector
    return OnnxEmbedder(build_static_embedder(tmp_path / "model", WORDS, table))


def test_every_store_ingests_searches_filters_and_forgets_alike(store_url: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("---\ntopic: pets\n---\ncats purr")
    (docs / "dogs.txt").write_text("dogs bark loudly")
    (docs / "fish.txt").write_text("fish swim")
    kb = KnowledgeBase(store_url, embedder=embedder(tmp_path))
    assert len(kb.ingest([docs], index="pets", namespace="home").ingested) == 3
    assert kb.ingest([docs], index="pets", namespace="home").ingested == []
    assert kb.store.count("pets", "home") == 3
    assert [
        h.metadata["filename"]
        for h in kb.search("barking dogs", index="pets", namespace="home", mode="lexical")
    ] == ["dogs.txt"]
    assert [
        h.metadata["filename"] for h in kb.search("purr", index="pets", namespace="home", mode="vector", k=2)
    ] == ["cats.md", "dogs.txt"]
    assert (
        kb.search("purr", index="pets", namespace="home", mode="hybrid")[0].metadata["file_topic"] == "pets"
    )
    only = kb.search("purr", index="pets", namespace="home", mode="vector", where={"filename": "fish.txt"})
    assert [h.metadata["filename"] for h in only] == ["fish.txt"]
    assert kb.search("cats", index="pets", namespace="home", mode="lexical", where={"chunkNumber": 1})
    assert kb.search("cats", index="pets", namespace="elsewhere") == []
    (docs / "fish.txt").unlink()
    assert kb.ingest([docs], index="pets", namespace="home").removed == [str(docs / "fish.txt")]
    assert "fish.txt" not in {
        h.metadata["filename"] for h in kb.search("swim fish", index="pets", namespace="home", mode="vector")
    }
    kb.close()


def test_a_second_writer_s_changes_reach_a_reader_s_vector_cache(store_url: str, tmp_path: Path) -> None:
    model = embedder(tmp_path)
    reader, writer = open_store(store_url), open_store(store_url)
    vector = model.embed(["cats"])
    writer.replace("i", "n", "a", "1", [NewChunk("a1", "cats", {"content": "cats"})], vector, model.name)
    assert [h.id for h in reader.nearest("i", "n", vector[0], 5, None)] == ["a1"]
    writer.replace("i", "n", "b", "1", [NewChunk("b1", "cats", {"content": "cats"})], vector, model.name)
    assert sorted(h.id for h in reader.nearest("i", "n", vector[0], 5, None)) == ["a1", "b1"]
    with pytest.raises(UserError, match="holds vectors from"):
        writer.replace("i", "n", "c", "1", [NewChunk("c1", "x", {})], vector, "onnx:another")
    reader.close()
    writer.close()


@pytest.mark.parametrize("failure", ["a chunk id another file holds", "fewer vectors than chunks"])
def test_a_write_failing_midway_leaves_the_file_as_it_was(
    store_url: str, tmp_path: Path, failure: str
) -> None:
    """The old chunks are deleted before the new ones are inserted: a failure between the two (the database
    refusing a row, the rows failing to build) must roll the delete back, words, vectors and fingerprint alike."""
    model = embedder(tmp_path)
    store = open_store(store_url)
    old = [
        NewChunk("a1", "cats purr", {"content": "cats purr"}),
        NewChunk("a2", "dogs bark", {"content": "dogs bark"}),
    ]
    store.replace("i", "n", "a.txt", "old", old, model.embed([c.content for c in old]), model.name)
    store.replace("i", "n", "b.txt", "b", [NewChunk("b1", "fish", {})], model.embed(["fish"]), model.name)
    new = [NewChunk("a1", "fish swim", {"content": "fish swim"}), NewChunk("a3", "cats", {"content": "cats"})]
    vectors = model.embed([c.content for c in new])
    if failure == "a chunk id another file holds":
        new[1] = NewChunk("b1", "cats", {"content": "cats"})  # the id is unique: the second insert fails
    else:
        vectors = vectors[:1]
    with pytest.raises(Exception):  # noqa: B017, PT011 - sqlite3, psycopg or UserError, as the store raises it
        store.replace("i", "n", "a.txt", "new", new, vectors, model.name)
    assert store.fingerprints("i", "n") == {"a.txt": "old", "b.txt": "b"}
    assert store.count("i", "n") == 3
    assert [h.id for h in store.lexical("i", "n", "purr", 5, None)] == ["a1"]
    assert store.lexical("i", "n", "swim", 5, None) == []
    assert [h.id for h in store.nearest("i", "n", model.embed(["purr"])[0], 1, None)] == ["a1"]
    store.replace(
        "i", "n", "a.txt", "new", [NewChunk("a3", "fish swim", {})], model.embed(["swim"]), model.name
    )
    assert [h.id for h in store.lexical("i", "n", "swim", 5, None)] == ["a3"]  # the connection still writes
    assert store.count("i", "n") == 2
    store.close()
