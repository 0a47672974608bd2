import os
import shutil
from pathlib import Path

import pytest

from tether.sandbox import Limits, Sandbox


@pytest.fixture(autouse=True)
def _requires_bwrap() -> None:  # pyright: ignore[reportUnusedFunction]  # autouse fixture
    # On CI bubblewrap is installed by .ci/run (and CI=1 makes its absence a failure); elsewhere, skip.
    if shutil.which("bwrap") is None and not os.environ.get("CI"):
        pytest.skip("bubblewrap is not installed")


@pytest.fixture
def limits() -> Limits:
    return Limits(
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
def sandbox(workspace: Path, limits: Limits) -> Sandbox:
    return Sandbox(workspace, limits=limits)
