import ctypes
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"


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


@pytest.fixture
def corpora_dir() -> Path:
    assert CORPORA.is_dir(), f"shared corpora not found at {CORPORA}: check out ../shared beside the repo"
    return CORPORA
