import json
import os
import threading
from pathlib import Path

import pytest

from tether.builtin import _openat
from tether.builtin._paths import Located, Roots
from tether.exceptions import ToolError, UserError

CORPUS = [
    json.loads(line) for line in (Path(__file__).parent / "path_traversal.jsonl").read_text().splitlines()
]


@pytest.fixture(params=["openat2", "walk"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both resolvers: openat2(RESOLVE_BENEATH), and the O_NOFOLLOW walk of kernels without it."""
    monkeypatch.setattr(_openat, "_openat2_works", None if request.param == "openat2" else False)
    return request.param


def _read(roots: Roots, path: str) -> str:
    fd = roots.open(path, os.O_RDONLY)
    with os.fdopen(fd) as f:
        return f.read()


def test_the_traversal_corpus_has_at_least_fifty_cases() -> None:
    assert len(CORPUS) >= 50
    assert len({case["path"] for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[case["attack"] for case in CORPUS])
def test_every_traversal_in_the_corpus_is_refused(tree: Path, case: dict[str, str], kernel: str) -> None:
    roots = Roots([tree])
    with pytest.raises(ToolError) as caught:
        _read(roots, case["path"])
    assert caught.value.code == "PERMISSION_DENIED"
    assert caught.value.recoverable
    assert (
        caught.value.suggestion
        == "Use a path relative to the workspace root without '..', e.g. 'notes/todo.md'."
    )
    assert "TOP-SECRET" not in caught.value.message


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("notes.txt", "one\ntwo\nthree\n"),
        ("./notes.txt", "one\ntwo\nthree\n"),
        ("sub//inner.txt", "inner\n"),
        ("sub_link/inner.txt", "inner\n"),
        ("sub/notes_link", "one\ntwo\nthree\n"),
    ],
)
def test_paths_inside_the_root_open_including_symlinks_that_stay_inside(
    tree: Path, path: str, content: str
) -> None:
    assert _read(Roots([tree]), path) == content


def test_absolute_paths_inside_a_root_are_accepted(tree: Path) -> None:
    roots = Roots([tree])
    assert _read(roots, str(tree / "notes.txt")) == "one\ntwo\nthree\n"
    assert roots.locate(str(tree)) == Located(tree, "")


def test_a_second_root_is_reached_by_absolute_path(tree: Path, tmp_path: Path) -> None:
    roots = Roots([tree, tmp_path / "outside"])
    assert _read(roots, str(tmp_path / "outside" / "secret.txt")) == "TOP-SECRET\n"
    with pytest.raises(ToolError) as caught:
        _read(roots, "/etc/passwd")
    assert caught.value.suggestion == (
        "Use a path relative to the workspace root without '..', e.g. 'notes/todo.md' "
        f"(or absolute paths inside {tmp_path / 'outside'})."
    )


def test_missing_files_are_not_found_with_a_suggestion(tree: Path) -> None:
    with pytest.raises(ToolError) as caught:
        _read(Roots([tree]), "nope.txt")
    assert (caught.value.code, caught.value.message, caught.value.suggestion) == (
        "NOT_FOUND",
        "no such file or directory: 'nope.txt'",
        "List the parent directory with fs.ls to see what exists.",
    )


def test_the_refusal_message_names_the_problem(tree: Path) -> None:
    roots = Roots([tree])
    messages: dict[str, str] = {}
    for path in ("....//etc", "%2e%2e/x", "\uff0e\uff0e/x", "a\x00b", "link_out", "/etc/passwd"):
        with pytest.raises(ToolError) as caught:
            _read(roots, path)
        messages[path] = caught.value.message
    assert messages == {
        "....//etc": "path '....//etc' contains a '..' (or all-dots) component",
        "%2e%2e/x": "path '%2e%2e/x' contains a '..' (or all-dots) component once percent-decoded",
        "\uff0e\uff0e/x": "path '\uff0e\uff0e/x' contains a '..' (or all-dots) component once normalised",
        "a\x00b": "path 'a\\x00b' contains a NUL byte",
        "link_out": "'link_out' leaves the allowed roots (through `..` or a symlink)",
        "/etc/passwd": "'/etc/passwd' is outside the allowed roots",
    }


def test_a_symlink_swapped_in_mid_operation_never_leaks(tree: Path, kernel: str) -> None:
    """A racer flips `race` between a real directory and a symlink out while we keep opening through it."""
    roots = Roots([tree])
    real = tree / "race_dir"
    real.mkdir()
    (real / "secret.txt").write_text("inside\n")
    stop = threading.Event()

    def flip() -> None:
        link = tree / "race"
        while not stop.is_set():
            for target in ("race_dir", "../outside"):
                tmp = tree / "race.tmp"
                os.symlink(target, tmp)
                os.replace(tmp, link)

    racer = threading.Thread(target=flip)
    racer.start()
    seen: set[str] = set()
    try:
        for _ in range(2000):
            try:
                seen.add(_read(roots, "race/secret.txt"))
            except ToolError as exc:
                seen.add(exc.code)
    finally:
        stop.set()
        racer.join()
    assert "TOP-SECRET\n" not in seen
    assert seen <= {"inside\n", "PERMISSION_DENIED", "NOT_FOUND"}


def test_resolve_returns_the_real_path_inside_the_roots(tree: Path) -> None:
    roots = Roots([tree])
    assert roots.resolve("sub_link/inner.txt") == tree / "sub" / "inner.txt"
    assert roots.display(tree / "sub" / "inner.txt") == "sub/inner.txt"
    assert roots.display(tree) == "."


def test_non_string_paths_are_invalid_args(tree: Path) -> None:
    with pytest.raises(ToolError) as caught:
        Roots([tree]).locate(42)
    assert caught.value.code == "INVALID_ARGS"


def test_roots_must_exist(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        Roots([tmp_path / "missing"])
    with pytest.raises(UserError):
        Roots([])
