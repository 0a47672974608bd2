import ctypes
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def in_ci() -> bool:
    """CI sets CI=true: there, what a test needs must be present, so its absence fails instead of skipping."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def requires(present: bool, missing: str) -> None:
    """Skip the test with `missing` as its one-line reason, or fail with it under CI."""
    if present:
        return
    if in_ci():
        pytest.fail(f"{missing} (CI must run this test)", pytrace=False)
    pytest.skip(missing)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def _exchanging(a: Path, b: Path) -> Iterator[None]:
    """Atomically swap two directory entries (renameat2 RENAME_EXCHANGE) in a loop, as a racing attacker
    sharing the workspace would, until the block ends."""
    libc = ctypes.CDLL(None, use_errno=True)
    first, second = bytes(a), bytes(b)
    stop = threading.Event()

    def race() -> None:
        while not stop.is_set():
            libc.renameat2(-100, first, -100, second, 2)  # AT_FDCWD, RENAME_EXCHANGE

    thread = threading.Thread(target=race)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@pytest.fixture
def exchanging() -> Callable[[Path, Path], AbstractContextManager[None]]:
    return _exchanging


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """The shared corpora (real model output and peers' test data), kept beside the repo as ../shared."""
    requires(
        CORPORA.is_dir(),
        f"needs the shared corpora at {CORPORA}: put the shared folder (seeds and corpora) beside the repo as ../shared",
    )
    return CORPORA


@pytest.fixture
def bwrap_installed(request: pytest.FixtureRequest) -> None:
    """For tests that run code in the sandbox; those marked `without_bwrap` simulate its absence, so run."""
    if request.node.get_closest_marker("without_bwrap") is None:
        requires(shutil.which("bwrap") is not None, "needs bubblewrap (apt-get install bubblewrap)")


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
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for an empty database: a SQLite file, or a new database on the session's PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tether.db'}"
    import psycopg  # only the PostgreSQL tests need it
    from psycopg import sql

    server: str = request.getfixturevalue("postgres_server")
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = server.replace("postgresql+psycopg", "postgresql") + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return f"{server}/{name}"
