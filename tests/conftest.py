from pathlib import Path

import pytest

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def corpora_dir() -> Path:
    assert CORPORA.is_dir(), f"shared corpora not found at {CORPORA}: check out ../shared beside the repo"
    return CORPORA
