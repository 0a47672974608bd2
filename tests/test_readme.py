"""The README's runnable examples (Python blocks that start with an import) run as written."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = [
    block
    for block in re.findall(
        r"^```python\n(.*?)^```$", (ROOT / "README.md").read_text(encoding="utf-8"), re.S | re.M
    )
    if block.startswith(("from ", "import "))
]


def test_the_readme_has_runnable_examples() -> None:
    assert BLOCKS


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.splitlines()[0][:40])
def test_readme_example_runs(block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    exec(compile(block, "README.md", "exec"), {})
