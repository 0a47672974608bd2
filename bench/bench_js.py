"""js.exec per-eval cost: a fresh V8 context per call (what js.exec does) against eval on a kept context."""

import statistics
import time
from collections.abc import Callable

from _timing import row
from tether.builtin._js import run_js
from tether.sandbox import Limits

RUNS = 300


def median_ms(fn: Callable[[], object], runs: int = RUNS) -> float:
    for _ in range(10):
        fn()
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


try:
    from py_mini_racer import MiniRacer
except ImportError:
    print("mini-racer is not installed (tether[js]); skipped")
else:
    limits = Limits()
    kept = MiniRacer()
    code = "let s = 0; for (let i = 0; i < 1000; i++) s += i; s"
    rows = [
        (
            "js.exec engine, `1 + 1` (fresh context)",
            median_ms(lambda: run_js("1 + 1", None, timeout_s=5, limits=limits)),
        ),
        (
            "js.exec engine, 1000-step loop (fresh context)",
            median_ms(lambda: run_js(code, None, timeout_s=5, limits=limits)),
        ),
        ("MiniRacer.eval `1 + 1` on a kept context", median_ms(lambda: kept.eval("1 + 1"))),
    ]
    print(row("evaluation", "median ms"))
    print(row("---", "---:"))
    for name, ms in rows:
        print(row(name, f"{ms:.3f}"))
