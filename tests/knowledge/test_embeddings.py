"""Embedders and rerankers load and run for real: ONNX models from a Hugging Face cache (the path a download
takes) or a folder, and an OpenAI-compatible /v1/embeddings server over HTTP."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from tether.exceptions import ModelError, UserError
from tether.knowledge import KnowledgeBase, OnnxEmbedder, OnnxReranker, OpenAIEmbedder, embedder_from_spec

from .onnx_models import as_downloaded, build_scorer, build_static_embedder

VOCAB = ["cats", "dogs", "purr", "bark", "kittens", "puppies", "the", "and"]


def table() -> np.ndarray[Any, np.dtype[np.float32]]:
    # two topics: feline words share one direction, canine words the other
    rows = np.zeros((len(VOCAB) + 2, 3), dtype=np.float32)
    for word, vector in {"cats": [1, 0, 0], "purr": [1, 0.1, 0], "kittens": [0.9, 0, 0.1],
                         "dogs": [0, 1, 0], "bark": [0.1, 1, 0], "puppies": [0, 0.9, 0.1],
                         "the": [0, 0, 1], "and": [0, 0, 1]}.items():  # fmt: skip
        rows[VOCAB.index(word) + 2] = vector
    return rows


def test_an_onnx_embedder_loads_from_the_hugging_face_cache_as_a_downloaded_model_does(
    tmp_path: Path, hf_offline: None
) -> None:
    built = build_static_embedder(tmp_path / "built", VOCAB, table())
    as_downloaded(tmp_path / "hub", "tether-tests/static-pets", built)
    embedder = OnnxEmbedder("tether-tests/static-pets", cache_dir=tmp_path / "hub")
    vectors = embedder.embed(["cats purr", "kittens", "dogs bark", "the puppies and"])
    assert vectors.shape == (4, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.9
    assert similarity[2, 3] > similarity[2, 1]
    assert embedder.name == "onnx:tether-tests/static-pets"


def test_a_model_that_is_neither_a_folder_nor_downloadable_is_a_user_error(
    tmp_path: Path, hf_offline: None
) -> None:
    with pytest.raises(UserError, match="cannot get the model 'nobody/nothing'"):
        OnnxEmbedder("nobody/nothing", cache_dir=tmp_path)


def test_padding_does_not_change_a_text_s_vector(tmp_path: Path) -> None:
    embedder = OnnxEmbedder(build_static_embedder(tmp_path, VOCAB, table()))
    alone = embedder.embed(["cats"])[0]
    beside_a_long_text = embedder.embed(["cats", "the dogs and the puppies bark and bark"])[0]
    assert np.allclose(alone, beside_a_long_text)


def test_an_onnx_cross_encoder_reorders_hits(tmp_path: Path) -> None:
    weights = np.zeros(len(VOCAB) + 2, dtype=np.float32)
    weights[VOCAB.index("purr") + 2] = 2.0
    weights[VOCAB.index("bark") + 2] = 1.0
    reranker = OnnxReranker(build_scorer(tmp_path / "scorer", VOCAB, weights))
    assert reranker.score("cats", ["dogs bark", "cats purr purr", "the"]) == [1.0, 4.0, 0.0]
    kb = KnowledgeBase(tmp_path / "k.db", reranker=reranker)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("cats and dogs")
    (docs / "b.txt").write_text("cats purr")
    kb.ingest([docs])
    assert [h.metadata["filename"] for h in kb.search("cats and dogs", rerank=True)] == ["b.txt", "a.txt"]


class FakeEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/embeddings: one dimension per letter a-z, counting letters."""

    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEmbeddings.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            return
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [float(text.lower().count(c)) for c in "abcdefghijklmnopqrstuvwxyz"],
            }
            for i, text in enumerate(body["input"])
        ]
        answer = json.dumps(
            {
                "object": "list",
                "data": data[::-1],
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(answer.encode())

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def embeddings_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeEmbeddings.requests.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_the_openai_embedder_calls_v1_embeddings_in_batches_and_keeps_input_order(
    embeddings_server: str,
) -> None:
    embedder = OpenAIEmbedder("letters", base_url=embeddings_server, api_key="sk-test", batch_size=2)
    vectors = embedder.embed(["aaa", "bbb", "ab"])
    assert [r["input"] for r in FakeEmbeddings.requests] == [["aaa", "bbb"], ["ab"]]
    assert {r["path"] for r in FakeEmbeddings.requests} == {"/v1/embeddings"}
    assert FakeEmbeddings.requests[0]["auth"] == "Bearer sk-test"
    assert np.allclose(vectors[:, :2], [[1, 0], [0, 1], [2**-0.5, 2**-0.5]])


def test_an_index_remembers_its_embedder_and_searches_with_it(embeddings_server: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("zzz zzz")
    (tmp_path / "b.txt").write_text("yyy yyy")
    kb = KnowledgeBase(
        tmp_path / "k.db", embedder=embedder_from_spec("openai:letters", base_url=embeddings_server)
    )
    kb.ingest([tmp_path / "a.txt", tmp_path / "b.txt"], index="letters")
    later = KnowledgeBase(
        tmp_path / "k.db", base_url=embeddings_server
    )  # no embedder given: the recorded one
    assert [h.metadata["filename"] for h in later.search("y", index="letters", mode="vector")] == [
        "b.txt",
        "a.txt",
    ]
    other = KnowledgeBase(tmp_path / "k.db", embedder=OpenAIEmbedder("other", base_url=embeddings_server))
    with pytest.raises(
        UserError, match="index 'letters' was built with 'openai:letters', not 'openai:other'"
    ):
        other.search("y", index="letters")


def test_a_failing_endpoint_is_a_model_error(embeddings_server: str) -> None:
    with pytest.raises(ModelError, match="the embeddings endpoint failed"):
        OpenAIEmbedder("broken", base_url=embeddings_server).embed(["x"])


def test_unknown_embedder_specs_name_the_forms_that_exist() -> None:
    with pytest.raises(UserError, match="use onnx:REPO_OR_FOLDER"):
        embedder_from_spec("word2vec:x")
