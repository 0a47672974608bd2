"""Journal URLs to test against: a SQLite file, and a throwaway PostgreSQL server started for the session."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tether.store import SqlJournal


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server on 127.0.0.1, in a temp dir, for this test session; yields its base URL."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed; CI installs them")
    base = Path(tempfile.mkdtemp(prefix="tether-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root: run the server as `postgres` in a dir it owns
        user = pwd.getpwnam("postgres")
        os.chown(base, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    data, port = base / "data", _free_port()

    def run(*command: str | Path) -> None:
        subprocess.run([*prefix, *map(str, command)], check=True, capture_output=True)

    run(initdb, "-D", data, "-U", "tether", "--auth=trust", "-E", "UTF8")
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(pg_ctl, "-D", data, "-o", options, "-l", base / "log", "-w", "start")
    try:
        yield f"postgresql+psycopg://tether@127.0.0.1:{port}"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def journal_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for an empty journal database: a SQLite file, or a new database on the session's PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'journal.db'}"
    import psycopg  # only the PostgreSQL tests need it
    from psycopg import sql

    server: str = request.getfixturevalue("postgres_server")
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = server.replace("postgresql+psycopg", "postgresql") + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return f"{server}/{name}"


@pytest.fixture
def open_journal() -> Iterator[Callable[[str], SqlJournal]]:
    """Opens `SqlJournal`s that are closed when the test ends."""
    opened: list[SqlJournal] = []

    def open_(url: str) -> SqlJournal:
        opened.append(SqlJournal(url))
        return opened[-1]

    yield open_
    for journal in opened:
        journal.close()
