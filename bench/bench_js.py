"""js.exec per call: a fresh QuickJS context per call in a pooled sandboxed worker (what js.exec does), against
eval on a kept MiniRacer (V8) context in tether's own process (issue 12's floor: no isolation between calls,
none from tether), and a fresh QuickJS context made in tether's own process (the engine alone).

Interleaved in rounds, so every line sees the same load; medians over every call. Calls come 20 ms apart, as a
model's do (the worker makes the next contexts while idle); a back-to-back line shows a burst. CPU per call
counts tether's process (the worker's is not visible from here).
"""

import asyncio
import importlib
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _timing import row
from tether.builtin._js import run_js
from tether.builtin.exec import exec_pack
from tether.execution import Executor
from tether.sandbox import SandboxLimits
from tether.types import ToolCall

ROUNDS = 30
PER_ROUND = 20
PAUSE_S = 0.02


def _kept_mini_racer() -> Callable[[], Any] | None:
    try:  # the bench group's, for the floor only (not installed by `make setup`, so not typed here)
        mini_racer: Any = importlib.import_module("py_mini_racer")
    except ImportError:
        return None
    kept: Any = mini_racer.MiniRacer()
    return lambda: kept.eval("1 + 1")


def _fresh_quickjs() -> Callable[[], Any]:
    quickjs = __import__("_quickjs")  # the js extra's C module, without type stubs
    return lambda: quickjs.Context().eval("1 + 1")


async def main() -> None:
    limits = SandboxLimits()
    loop_code = "let s = 0; for (let i = 0; i < 1000; i++) s += i; s"
    executor = Executor(exec_pack(Path(os.getcwd()), enabled=True, limits=limits))
    call = ToolCall(id="c1", name="js.exec", arguments={"code": "1 + 1"}, why="Add the numbers the user gave")

    async def engine() -> Any:
        return await run_js("1 + 1", None, timeout_s=5, limits=limits)

    async def engine_loop() -> Any:
        return await run_js(loop_code, None, timeout_s=5, limits=limits)

    async def tool() -> Any:
        return await executor.execute(call)

    def sync(fn: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
        async def run() -> Any:
            return fn()

        return run

    cases: dict[str, tuple[Callable[[], Awaitable[Any]], float]] = {}
    kept = _kept_mini_racer()
    if kept is None:
        print("mini-racer (the bench group's) is not installed: no floor line")
    else:
        cases["MiniRacer.eval `1 + 1` on a kept context (in-process, no isolation)"] = (sync(kept), PAUSE_S)
    cases["fresh QuickJS context + eval `1 + 1` (in-process, no sandbox)"] = (sync(_fresh_quickjs()), PAUSE_S)
    cases["js.exec engine, `1 + 1` (fresh context, pooled sandboxed worker)"] = (engine, PAUSE_S)
    cases["js.exec engine, 1000-step loop"] = (engine_loop, PAUSE_S)
    cases["js.exec tool through the Executor (envelope)"] = (tool, PAUSE_S)
    cases["js.exec engine, `1 + 1` back to back"] = (engine, 0.0)

    for fn, _ in cases.values():  # warm: workers started, contexts made, code paths compiled
        for _ in range(20):
            await fn()
    wall: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    for _ in range(ROUNDS):
        for name, (fn, pause_s) in cases.items():
            for _ in range(PER_ROUND):
                if pause_s:
                    await asyncio.sleep(pause_s)
                start, start_cpu = time.perf_counter(), time.process_time()
                await fn()
                cpu[name].append((time.process_time() - start_cpu) * 1000)
                wall[name].append((time.perf_counter() - start) * 1000)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    print(f"python {sys.version.split()[0]}; {ROUNDS} rounds x {PER_ROUND} calls a line, interleaved")
    print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}\n")
    print(row("evaluation", "median ms", "p90 ms", "tether CPU ms per call (mean)"))
    print(row("---", "---:", "---:", "---:"))
    for name in cases:
        samples = sorted(wall[name])
        p90 = samples[int(len(samples) * 0.9)]
        print(
            row(name, f"{statistics.median(samples):.3f}", f"{p90:.3f}", f"{statistics.fmean(cpu[name]):.3f}")
        )


asyncio.run(main())
