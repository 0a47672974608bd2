from pathlib import Path

import pytest

from tether.sandbox import Sandbox, SandboxLimits


@pytest.fixture(autouse=True)
def _requires_bwrap(bwrap_installed: None) -> None:  # pyright: ignore[reportUnusedFunction]  # autouse fixture
    """Every sandbox test needs bubblewrap, except those marked `without_bwrap` (.ci/run installs it)."""


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
