import os
from pathlib import Path

import pytest


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A root with ordinary files, symlinks that stay inside and symlinks that leave; a secret beside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET\n")
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    (root / "sub" / "inner.txt").write_text("inner\n")
    links = {
        "link_out": "../outside/secret.txt",
        "abs_link": "/etc/passwd",
        "dir_out": "../outside",
        "etc_link": "/etc",
        "chain1": "chain2",
        "chain2": "../outside/secret.txt",
        "sub/up_up": "../..",
        "proc_link": "/proc/self/root",
        "loop": "loop",
        "sub_link": "sub",
        "sub/notes_link": "../notes.txt",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    return root


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
