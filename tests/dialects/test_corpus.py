"""Corpus-driven tests: every dialect over ../shared/corpora, with per-file pass rates.

Each file's floor is the number of exact matches reached so far; a change that reads fewer cases fails.
Run `tether corpus` for the full per-file table and the failing cases.
"""

import json
from pathlib import Path

import pytest

from tether.dialects._corpus import FileReport, run_file

MISLABELED = Path(__file__).with_name("mislabeled.json")

# file -> (exact call matches, stream passes) reached; raise these as dialects improve
FLOORS: dict[str, tuple[int, int]] = {
    "hermes.jsonl": (13, 13),
    "pythonic.jsonl": (3473, 3473),
    "olmo3_pythonic.jsonl": (10, 10),
}


def _exclusions() -> dict[tuple[str, int], str]:
    rows = json.loads(MISLABELED.read_text())
    return {(r["file"], r["line"]): r["reason"] for r in rows}


def _report(corpora_dir: Path, name: str) -> FileReport:
    return run_file(corpora_dir / name, exclusions=_exclusions())


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_corpus_file_reaches_its_floor(corpora_dir: Path, name: str) -> None:
    report = _report(corpora_dir, name)
    exact, stream = FLOORS[name]
    failures = "\n".join(
        f"{f.line} {f.what}: {f.text[:120]!r} {f.detail[:200]}" for f in report.failures[:10]
    )
    assert report.exact >= exact, f"{report.as_dict()}\n{failures}"
    assert report.stream_ok >= stream, f"{report.as_dict()}\n{failures}"
    assert report.content_ok == report.content_cases, f"{report.as_dict()}\n{failures}"


def test_mislabeled_cases_name_a_reason() -> None:
    for (file, line), reason in _exclusions().items():
        assert file.endswith(".jsonl")
        assert line > 0
        assert len(reason) > 20
