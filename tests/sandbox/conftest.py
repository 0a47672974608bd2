import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.sandbox import (
    Sandbox,
    SandboxLimits,
    _zygote,  # both start paths are tested
)


@pytest.fixture(autouse=True)
def _requires_bwrap(bwrap_installed: None) -> None:  # pyright: ignore[reportUnusedFunction]  # autouse fixture
    """Every sandbox test needs bubblewrap, except those marked `without_bwrap` (.ci/run installs it)."""


@pytest.fixture(autouse=True, params=["zygote", "bwrap"])
def spawn_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Every sandbox test runs on both start paths: a spare of a zygote, and one bubblewrap per run (the
    fallback). On the zygote path the test fails if a run fell back to bubblewrap."""
    path: str = request.param
    monkeypatch.setattr(_zygote, "enabled", path == "zygote")
    _zygote.reset()
    if path == "bwrap":
        zygotes_gone()
    yield path
    if path == "zygote":
        works, why = _zygote.status()
        assert works, why


@pytest.fixture
def limits() -> SandboxLimits:
    return SandboxLimits(
        address_space_bytes=512 * 1024 * 1024,
        file_size_bytes=8 * 1024 * 1024,
        tmp_bytes=4 * 1024 * 1024,
        output_bytes=64 * 1024,
        processes=64,
        timeout_s=10,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def sandbox(workspace: Path, limits: SandboxLimits) -> Sandbox:
    return Sandbox(workspace, limits=limits)


def zygotes_gone(seconds: float = 5.0) -> None:
    """Wait until no zygote (or spare) of an earlier test is still dying: as an unprivileged user without a
    cgroup their processes count against the next bubblewrap's RLIMIT_NPROC."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(b"zygote's program" in _cmdline(pid) for pid in _pids()):
        time.sleep(0.02)


def _pids() -> list[str]:
    return [name for name in os.listdir("/proc") if name.isdigit()]


def _cmdline(pid: str) -> bytes:
    try:
        return Path("/proc", pid, "cmdline").read_bytes()
    except OSError:
        return b""
