"""js.exec per call: a fresh V8 isolate per call in a pooled sandboxed worker (what js.exec does), against
eval on a kept MiniRacer context in tether's own process (no isolation between calls, none from tether).

Calls come one at a time with a short pause between them, as a model's calls do (the worker makes the next
isolates while idle); a back-to-back line shows the throughput when isolates cannot be made ahead.
"""

import statistics
import time
from collections.abc import Callable

from _timing import row
from tether.builtin._js import run_js
from tether.sandbox import SandboxLimits

RUNS = 300


def median_ms(fn: Callable[[], object], runs: int = RUNS, pause_s: float = 0.0) -> float:
    for _ in range(10):
        fn()
    samples: list[float] = []
    for _ in range(runs):
        if pause_s:
            time.sleep(pause_s)
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


try:
    from py_mini_racer import MiniRacer
except ImportError:
    print("mini-racer is not installed (tether[js]); skipped")
else:
    limits = SandboxLimits()
    kept = MiniRacer()
    loop = "let s = 0; for (let i = 0; i < 1000; i++) s += i; s"
    rows = [
        (
            "js.exec engine, `1 + 1` (fresh isolate, pooled worker)",
            median_ms(lambda: run_js("1 + 1", None, timeout_s=5, limits=limits), pause_s=0.02),
        ),
        (
            "js.exec engine, 1000-step loop (fresh isolate, pooled worker)",
            median_ms(lambda: run_js(loop, None, timeout_s=5, limits=limits), pause_s=0.02),
        ),
        (
            "js.exec engine, `1 + 1` back to back",
            median_ms(lambda: run_js("1 + 1", None, timeout_s=5, limits=limits), 100),
        ),
        (
            "MiniRacer.eval `1 + 1` on a kept context (in-process)",
            median_ms(lambda: kept.eval("1 + 1"), pause_s=0.02),
        ),
    ]
    print(row("evaluation", "median ms"))
    print(row("---", "---:"))
    for name, ms in rows:
        print(row(name, f"{ms:.3f}"))
