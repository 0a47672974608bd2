"""Sandboxed `terminal.run` of `true` against a plain subprocess: the cost of the sandbox per call.

Medians of many runs. `Sandbox.run` is bubblewrap with new user/pid/net/ipc/uts/cgroup namespaces, every
capability dropped, seccomp, rlimits and (as root) the drop to an unprivileged uid; `terminal.run` adds the
tool layer (path checks of cwd, the envelope's data).
"""

import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable

from _timing import row
from tether.builtin import exec_pack
from tether.sandbox import Sandbox

RUNS = 200


def median_ms(fn: Callable[[], object], runs: int = RUNS) -> float:
    for _ in range(10):
        fn()
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


with tempfile.TemporaryDirectory() as workspace:
    sandbox = Sandbox(workspace)
    run_tool = exec_pack(workspace, enabled=True).get("terminal.run")
    assert run_tool is not None
    assert run_tool.function is not None
    terminal_run: Callable[..., object] = run_tool.function
    plain = median_ms(lambda: subprocess.run(["true"], check=True))
    boxed = median_ms(lambda: sandbox.run(["true"]))
    tool = median_ms(lambda: terminal_run(cmd=["true"]))

print(row("run of `true`", "median ms", "overhead vs plain ms"))
print(row("---", "---:", "---:"))
print(row("subprocess.run (no sandbox)", f"{plain:.2f}", "-"))
print(row("Sandbox.run (bubblewrap)", f"{boxed:.2f}", f"{boxed - plain:.2f}"))
print(row("terminal.run tool", f"{tool:.2f}", f"{tool - plain:.2f}"))
