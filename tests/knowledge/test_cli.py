"""`tether ingest` and `tether search` from the command line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from tether.cli import app

from .onnx_models import build_scorer, build_static_embedder

runner = CliRunner()


def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("---\ntags: pets\n---\ncats purr and kittens purr")
    (docs / "dogs.txt").write_text("dogs bark and puppies bark")
    (docs / "broken.txt").write_bytes(b"\xff\xfe\x00binary")
    (tmp_path / "faq.csv").write_text("q,a\nDo cats bark?,No: cats purr.\n")
    return docs


def test_ingest_reports_each_failure_and_search_prints_a_table(tmp_path: Path) -> None:
    docs, db = folder(tmp_path), str(tmp_path / "k.db")
    ingested = runner.invoke(
        app,
        [
            "ingest",
            str(docs),
            str(tmp_path / "faq.csv"),
            "--db",
            db,
            "--index",
            "pets",
            "--namespace",
            "home",
        ],
    )
    assert ingested.exit_code == 1  # one file failed; the others are in
    assert (
        "3 ingested (3 chunks), 0 unchanged, 0 removed, 1 failed; index 'pets', namespace 'home'"
        in ingested.output
    )
    assert f"error: {docs / 'broken.txt'}: a binary file, not text (it holds NUL bytes)" in ingested.output
    found = runner.invoke(
        app, ["search", "do cats bark", "--db", db, "--index", "pets", "--namespace", "home", "-k", "2"]
    )
    assert found.exit_code == 0, found.output
    lines = found.output.splitlines()
    assert lines[0].split() == ["#", "score", "file", "where", "content"]
    assert lines[1].split()[2:5] == ["faq.csv", "row", "1"]
    again = runner.invoke(
        app, ["ingest", str(docs / "cats.md"), "--db", db, "--index", "pets", "--namespace", "home"]
    )
    assert "0 ingested (0 chunks), 1 unchanged" in again.output
    assert again.exit_code == 0


def test_ingest_with_an_onnx_embedder_then_search_with_rerank(tmp_path: Path) -> None:
    vocabulary = ["cats", "purr", "kittens", "dogs", "bark", "puppies", "and", "tags", "pets"]
    table = np.eye(len(vocabulary) + 2, 4, k=-2, dtype=np.float32) + 0.01
    model = build_static_embedder(tmp_path / "model", vocabulary, table)
    weights = np.zeros(len(vocabulary) + 2, dtype=np.float32)
    weights[vocabulary.index("puppies") + 2] = 5.0
    scorer = build_scorer(tmp_path / "scorer", vocabulary, weights)
    docs, db = folder(tmp_path), str(tmp_path / "k.db")
    (docs / "broken.txt").unlink()
    ingested = runner.invoke(app, ["ingest", str(docs), "--db", db, "--embedder", f"onnx:{model}"])
    assert ingested.exit_code == 0, ingested.output
    found = runner.invoke(app, ["search", "dogs", "--db", db, "--mode", "vector", "-k", "1"])
    assert found.exit_code == 0, found.output
    assert "dogs.txt" in found.output
    reranked = runner.invoke(app, ["search", "cats", "--db", db, "--rerank", "--reranker", str(scorer)])
    assert reranked.exit_code == 0, reranked.output
    assert reranked.output.splitlines()[0].split()[:3] == ["#", "rerank", "score"]
    assert reranked.output.splitlines()[1].split()[2] == "dogs.txt"  # "puppies" outweighs everything


def test_ingest_with_the_wordllama_embedder_then_search_by_meaning(tmp_path: Path) -> None:
    docs, db = folder(tmp_path), str(tmp_path / "k.db")
    (docs / "broken.txt").unlink()
    ingested = runner.invoke(app, ["ingest", str(docs), "--db", db, "--embedder", "wordllama"])
    assert ingested.exit_code == 0, ingested.output
    found = runner.invoke(app, ["search", "a barking puppy", "--db", db, "--mode", "vector", "-k", "1"])
    assert found.exit_code == 0, found.output
    assert "dogs.txt" in found.output


def test_search_takes_the_hybrid_vector_weight_and_the_fusion(tmp_path: Path) -> None:
    docs, db = folder(tmp_path), str(tmp_path / "k.db")
    (docs / "broken.txt").unlink()
    ingested = runner.invoke(
        app, ["ingest", str(docs), str(tmp_path / "faq.csv"), "--db", db, "--embedder", "wordllama"]
    )
    assert ingested.exit_code == 0, ingested.output

    def rows(*options: str) -> list[list[str]]:
        found = runner.invoke(app, ["search", "do cats bark", "--db", db, "--mode", "hybrid", *options])
        assert found.exit_code == 0, found.output
        return [line.split()[:3] for line in found.output.splitlines()[1:]]

    # the Q&A row is first on both sides: min-max normalised, it scores 1 whatever the weight
    assert rows()[0] == ["1", "1.0000", "faq.csv"]
    # dogs.txt is the worst of the words side (normalised to 0) but close to the row by meaning
    assert rows("--vector-weight", "0")[1] == ["2", "0.0000", "dogs.txt"]
    assert float(rows("--vector-weight", "1")[1][1]) > 0.5
    assert rows("--fusion", "rrf")[0] == ["1", f"{2 / 61:.4f}", "faq.csv"]
    for options, error in [
        (["--vector-weight", "1.5"], "vector_weight is a weight from 0 to 1, not 1.5"),
        (["--fusion", "sum"], "--fusion is convex or rrf, not 'sum'"),
    ]:
        result = runner.invoke(app, ["search", "x", "--db", db, *options])
        assert result.exit_code == 2
        assert error in result.output


def test_bad_options_are_one_error_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["search", "x", "--db", str(tmp_path / "k.db"), "--mode", "fuzzy"])
    assert result.exit_code == 2
    assert "--mode is auto, lexical, vector or hybrid, not 'fuzzy'" in result.output
    result = runner.invoke(app, ["ingest", str(tmp_path / "none"), "--db", str(tmp_path / "k.db")])
    assert result.exit_code == 2
    assert "no such file or folder" in result.output
    result = runner.invoke(
        app, ["ingest", str(tmp_path), "--db", str(tmp_path / "k.db"), "--embedder", "glove"]
    )
    assert result.exit_code == 2
    assert "unknown embedder 'glove'" in result.output
