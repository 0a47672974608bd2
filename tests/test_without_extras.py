"""The suite on a machine without what some tests need: the shared corpora beside the repo, or bubblewrap.

Tests that need them skip with one line saying what is missing (and fail under CI=true, where everything
must run); tests that simulate their absence run anyway.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pytest_in(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *args],
        cwd=root,
        env={**os.environ, "CI": "", **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done.stdout + done.stderr


def test_without_the_shared_corpora_their_tests_skip_saying_where_they_go_except_under_ci(
    tmp_path: Path,
) -> None:
    clone = tmp_path / "tether"  # a fresh clone: nothing beside it
    shutil.copytree(ROOT / "tests", clone / "tests")
    shutil.copy(ROOT / "pyproject.toml", clone)
    test = "tests/tools/test_yaml_definitions.py"
    reason = f"needs the shared corpora at {tmp_path / 'shared' / 'corpora'}: put the shared folder"
    alone = pytest_in(clone, test)
    assert "passed, 1 skipped in" in alone
    assert f"SKIPPED [1] {test}:" in alone
    assert reason in alone
    under_ci = pytest_in(clone, test, env={"CI": "true"})
    assert "passed, 1 error in" in under_ci
    assert "(CI must run this test)" in under_ci


def test_the_refusals_of_code_running_tools_run_without_bubblewrap(tmp_path: Path) -> None:
    path = tmp_path / "bin"  # every program on PATH except bwrap
    path.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for program in Path(folder).glob("*") if Path(folder).is_dir() else ():
            target = path / program.name
            if program.name != "bwrap" and not target.exists():
                target.symlink_to(program)
    out = pytest_in(
        ROOT, "tests/builtin/test_exec.py", "tests/sandbox/test_sandbox.py", env={"PATH": str(path)}
    )
    # code execution off, bubblewrap missing, the explicit opt-out: in both modules (the sandbox's on both start
    # paths, zygote and one bubblewrap per run)
    assert "7 passed" in out
    assert ": needs bubblewrap (apt-get install bubblewrap)" in out  # the rest, each with its reason
