"""Sandboxed `terminal.run` of `true` against a plain subprocess: the cost of the sandbox per call.

Medians of wall time over many runs, and mean CPU time (tether's and its children's; unlike wall time it
barely moves when other work competes for the cores). `Sandbox.run` is bubblewrap with new user, pid, net,
ipc, uts and cgroup namespaces, every capability dropped, seccomp, rlimits and, as root, the drop to an
unprivileged uid with an idmapped workspace; `terminal.run` adds the tool layer (cwd containment, result).
"""

import os
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable

from _timing import row
from tether.builtin import exec_pack
from tether.sandbox import Sandbox

RUNS = 200


def cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(fn: Callable[[], object], runs: int = RUNS) -> tuple[float, float]:
    """(median wall ms, mean CPU ms) of `fn()`."""
    for _ in range(10):
        fn()
    samples: list[float] = []
    cpu_start = cpu_s()
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), (cpu_s() - cpu_start) * 1000 / runs


with tempfile.TemporaryDirectory() as workspace:
    sandbox = Sandbox(workspace)
    run_tool = exec_pack(workspace, enabled=True).get("terminal.run")
    assert run_tool is not None
    assert run_tool.function is not None
    terminal_run: Callable[..., object] = run_tool.function
    plain = measure(lambda: subprocess.run(["true"], check=True))
    boxed = measure(lambda: sandbox.run(["true"]))
    tool = measure(lambda: terminal_run(cmd=["true"]))

print(f"(uid {os.geteuid()}, load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)\n")
print(row("run of `true`", "median wall ms", "overhead ms", "CPU ms per run", "CPU overhead ms"))
print(row("---", "---:", "---:", "---:", "---:"))
print(row("subprocess.run (no sandbox)", f"{plain[0]:.2f}", "-", f"{plain[1]:.2f}", "-"))
for name, (wall, cpu) in (("Sandbox.run (bubblewrap)", boxed), ("terminal.run tool", tool)):
    print(row(name, f"{wall:.2f}", f"{wall - plain[0]:.2f}", f"{cpu:.2f}", f"{cpu - plain[1]:.2f}"))
