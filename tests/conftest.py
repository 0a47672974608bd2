import ctypes
import os
import shutil
import threading
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
