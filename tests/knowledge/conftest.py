"""Hugging Face Hub access turned off (a model must come from the cache as a download leaves it), and the
stores to test against: a SQLite file, and a database on the session's throwaway PostgreSQL server."""

import uuid
from pathlib import Path

import pytest


@pytest.fixture
def hf_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where an empty store lives: a SQLite file, or a fresh database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "k.db")
    import psycopg
    from psycopg import sql

    # the session's server (tests/conftest.py), addressed as a user would write it: no driver in the URL
    server = request.getfixturevalue("postgres_server").replace("postgresql+psycopg", "postgresql")
    name = f"k_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return f"{server}/{name}"
