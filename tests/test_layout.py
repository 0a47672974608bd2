"""The test tree's layout: pytest imports a test file outside a package by its bare name, so two such files
with one name stop a full run at collection (each folder's own run passes)."""

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def test_no_two_test_files_import_as_one_module() -> None:
    found: defaultdict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        found[_module_name(path)].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in found.items() if len(paths) > 1}
    assert len(found) > 100
    assert clashes == {}, f"rename one of each, or make its folder a package: {clashes}"
