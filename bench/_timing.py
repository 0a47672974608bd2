"""Small timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

__all__ = ["per_call_us", "process_ms", "row"]


def per_call_us(fn: Callable[[], object], *, number: int = 20_000, repeat: int = 7) -> float:
    """Best-of-`repeat` mean time of one `fn()` call, in microseconds."""
    for _ in range(min(number, 1000)):
        fn()  # warm caches and lazy compilation
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e6


def process_ms(code: str, *, runs: int = 15) -> float:
    """Median wall time of `python -c code` in a fresh interpreter, in ms (bytecode caches warm)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)  # writes .pyc files once
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"
