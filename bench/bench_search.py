"""search.lexical against ripgrep alone on a large generated tree (4,000 files, 1.2 M lines).

The tool's ripgrep engine adds path containment, sorting and result shaping; the pure-Python engine is the
fallback where ripgrep is not installed.
"""

import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _timing import row
from tether.builtin import search_pack

PATTERN = r"def handler_\d+_7\d\("


def median_ms(fn: Callable[[], object], runs: int = 7) -> float:
    fn()
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def make_tree(root: Path) -> None:
    for i in range(4000):
        folder = root / f"pkg{i % 40}" / f"mod{i % 400}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = (
            f"def handler_{i}_{j}(request):\n    return respond(request, {j})\n    # padding {j}\n"
            for j in range(100)
        )
        (folder / f"file{i}.py").write_text("".join(lines))


PATTERNS = {"rare (1 hit)": r"def handler_3999_99\(", "common (40,000 hits)": PATTERN}

with tempfile.TemporaryDirectory() as tmp:
    root = Path(tmp)
    make_tree(root)
    rg = shutil.which("rg")
    rows: list[tuple[str, str, float, int]] = []
    for label, pattern in PATTERNS.items():
        if rg:
            argv = [rg, "-n", "--no-ignore", "--hidden", pattern, str(root)]
            hits = subprocess.run(argv, capture_output=True, check=True).stdout.count(b"\n")
            rows.append(
                (
                    label,
                    "rg alone",
                    median_ms(lambda argv=argv: subprocess.run(argv, capture_output=True)),
                    hits,
                )
            )
        for engine in (["rg"] if rg else []) + ["python"]:
            lexical = search_pack([root], engine=engine).get("search.lexical")
            assert lexical is not None
            fn = lexical.function
            assert fn is not None
            found = len(fn(query=pattern, max_results=1000))
            ms = median_ms(lambda fn=fn, pattern=pattern: fn(query=pattern, max_results=1000))
            rows.append((label, f"search.lexical ({engine} engine)", ms, found))

print(row("pattern", "search of 1.2 M lines in 4,000 files", "median ms", "results"))
print(row("---", "---", "---:", "---:"))
for label, name, ms, hits in rows:
    print(row(label, name, f"{ms:.1f}", hits))
