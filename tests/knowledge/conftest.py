"""Hugging Face Hub access turned off (a model must come from the cache as a download leaves it), and the
stores to test against: a SQLite file, and a throwaway PostgreSQL server."""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def hf_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found or (candidates[-1] if candidates else None)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL server on 127.0.0.1 for this session (as tests/store starts one)."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed; CI installs them")
    base = Path(tempfile.mkdtemp(prefix="tether-kn-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root: run the server as `postgres` in a dir it owns
        user = pwd.getpwnam("postgres")
        os.chown(base, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def run(*command: str | Path) -> None:
        subprocess.run([*prefix, *map(str, command)], check=True, capture_output=True)

    run(initdb, "-D", base / "data", "-U", "tether", "--auth=trust", "-E", "UTF8")
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(pg_ctl, "-D", base / "data", "-o", options, "-l", base / "log", "-w", "start")
    try:
        yield f"postgresql://tether@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(base / "data"), "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where an empty store lives: a SQLite file, or a fresh database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "k.db")
    import psycopg
    from psycopg import sql

    server: str = request.getfixturevalue("postgres_url")
    name = f"k_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return server.rsplit("/", 1)[0] + f"/{name}"
