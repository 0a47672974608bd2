"""The attack suites again, with tether itself running as an unprivileged user (`nobody`).

As root, tether starts bubblewrap as an unprivileged uid, idmaps the workspace and puts each run in a
cgroup; as an ordinary user none of that happens (no uid drop, no idmap, usually no writable cgroup), so
the attacks must hold on that path too. A child process drops to `nobody` and runs the suites with pytest.
"""

import ctypes
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.sandbox._cleanup import remove_tree

REPO = Path(__file__).resolve().parents[2]
SUITES = [
    "tests/sandbox/test_attacks.py",
    "tests/sandbox/test_escapes.py",
    "tests/sandbox/test_zygote.py",
    "tests/sandbox/test_quota.py",
    "tests/builtin/test_exec_escapes.py",
]
NOBODY = 65534

_libc = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNS = 0x00020000
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 0x40000


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    enc = [None if x is None else x.encode() for x in (source, target, fstype, data)]
    if _libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]) != 0:
        raise OSError(ctypes.get_errno(), f"mount {target}")


def _become_nobody_seeing_the_interpreter(prefix: str) -> None:
    """In the child: a private mount namespace where the interpreter's prefix (often below root's 0700
    home) is reachable, then drop to nobody. The host's mounts are untouched."""
    if _libc.unshare(_CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    parts = Path(prefix).parts
    blocked = next(
        (
            str(Path(*parts[:i]))
            for i in range(2, len(parts) + 1)
            if not os.stat(Path(*parts[:i])).st_mode & 0o001
        ),
        None,
    )
    if blocked is not None:
        fd = os.open(prefix, os.O_PATH)
        _mount("tmpfs", blocked, "tmpfs", 0, "mode=0755")
        os.makedirs(prefix, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", prefix, None, _MS_BIND | _MS_REC, None)
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)


@pytest.fixture(params=["both"])
def spawn_path(request: pytest.FixtureRequest) -> str:
    """Not parametrized here: the suites run in the child take both start paths themselves."""
    return request.param


@pytest.fixture
def nobodys_dir() -> Iterator[Path]:
    """A directory of nobody's own (pytest's tmp_path lies below root's 0700 /tmp/pytest-of-root)."""
    path = Path(tempfile.mkdtemp(prefix="tether-nobody-"))
    (path / "home").mkdir()
    for each in (path, path / "home"):
        os.chown(each, NOBODY, NOBODY)
    yield path
    remove_tree(path)


def test_the_attack_suites_hold_when_tether_runs_as_an_unprivileged_user(nobodys_dir: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("tether already runs unprivileged here, so the suites themselves are that run")
    tmp_path, home = nobodys_dir, nobodys_dir / "home"
    prefix = os.path.realpath(sys.base_prefix)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--basetemp={tmp_path / 'tmp'}",
            *SUITES,
        ],
        cwd=REPO,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TMPDIR": str(tmp_path),
            "PYTHONDONTWRITEBYTECODE": "1",
            **({"CI": os.environ["CI"]} if "CI" in os.environ else {}),
        },
        preexec_fn=lambda: _become_nobody_seeing_the_interpreter(prefix),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1]
