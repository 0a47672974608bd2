"""Sandboxed `terminal.run` of `true` against a plain subprocess and a bare bubblewrap, and a sandboxed
python.exec of `print(1)` against a plain `/usr/bin/python3 -c` (the interpreter the sandbox runs), in one run.

Medians of wall time over many runs, and mean CPU time (tether's and its children's; unlike wall time it
barely moves when other work competes for the cores). The bare bwrap line is the same bwrap command line
`Sandbox.run` builds (namespaces, binds, tmpfs mounts, seccomp), started with subprocess.run as the
sandbox's uid: what bubblewrap costs by itself. `Sandbox.run` adds the pre-exec step (rlimits, the cgroup,
as root the drop to an unprivileged uid with an idmapped workspace) and output capture, run in a child of
the fork server; the line after it forks tether itself instead (what it did before the fork server, and
still does when the server cannot start). `terminal.run` adds the tool layer (cwd containment, result).
The process running this script is small; a real agent process is larger, and forking it costs more.
"""

import contextlib
import os
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _timing import row
from tether.builtin import exec_pack
from tether.sandbox import Sandbox, cgroup_support
from tether.sandbox import _forkserver as forkserver  # on and off
from tether.sandbox._bwrap import BwrapPlan, find_bwrap
from tether.sandbox._sandbox import _seccomp_fd  # pyright: ignore[reportPrivateUsage]  # the same filter

RUNS = 200


def cpu_s() -> float:
    """CPU seconds of tether, its reaped children and the fork server with the children it reaped."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    server = forkserver._server  # pyright: ignore[reportPrivateUsage]  # its CPU is part of the cost
    if server is not None and server.alive:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{server.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


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


def tool(name: str, workspace: str) -> Callable[..., object]:
    found = exec_pack(workspace, enabled=True).get(name)
    assert found is not None
    assert found.function is not None
    return found.function


with tempfile.TemporaryDirectory() as workspace, contextlib.ExitStack() as fds:
    os.chmod(workspace, 0o777)  # the bare bwrap runs as the sandbox's uid without staging
    uid = 65534 if os.geteuid() == 0 else None
    seccomp = _seccomp_fd(fds, network=False)
    plan = BwrapPlan(
        bwrap=find_bwrap() or "bwrap",
        uid=65534,
        workspace=workspace,
        chdir="/workspace",
        network=False,
        tmp_bytes=64 << 20,
        seccomp_fd=seccomp,
    )
    bare_argv = plan.argv(["true"])

    def bare() -> None:
        os.lseek(seccomp, 0, os.SEEK_SET)
        subprocess.run(
            bare_argv,
            check=True,
            pass_fds=(seccomp,),
            user=uid,
            group=uid,
            extra_groups=None if uid is None else [],
        )

    sandbox = Sandbox(workspace)

    def no_server() -> None:
        forkserver.enabled = False
        try:
            sandbox.run(["true"])
        finally:
            forkserver.enabled = True

    terminal_run, python_exec = tool("terminal.run", workspace), tool("python.exec", workspace)
    true_rows = [
        ("subprocess.run (no sandbox)", measure(lambda: subprocess.run(["true"], check=True))),
        ("bare bwrap, same command line", measure(bare)),
        ("Sandbox.run (fork server)", measure(lambda: sandbox.run(["true"]))),
        ("Sandbox.run (forking tether instead)", measure(no_server)),
        ("terminal.run tool", measure(lambda: terminal_run(cmd=["true"]))),
    ]
    python_rows = [
        (
            "/usr/bin/python3 -c 'print(1)' (no sandbox)",
            measure(
                lambda: subprocess.run(
                    ["/usr/bin/python3", "-c", "print(1)"], check=True, capture_output=True
                ),
                60,
            ),
        ),
        ("python.exec tool, print(1)", measure(lambda: python_exec(code="print(1)"), 60)),
    ]

print(
    f"(uid {os.geteuid()}, {cgroup_support().reason}, load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)\n"
)
print(row("run", "median wall ms", "over plain ms", "over bare bwrap ms", "CPU ms per run"))
print(row("---", "---:", "---:", "---:", "---:"))
plain, bare_bwrap = true_rows[0][1][0], true_rows[1][1][0]
for name, (wall, cpu) in true_rows:
    print(row(name, f"{wall:.2f}", f"{wall - plain:.2f}", f"{wall - bare_bwrap:.2f}", f"{cpu:.2f}"))
print()
print(row("run", "median wall ms", "ratio to plain", "CPU ms per run"))
print(row("---", "---:", "---:", "---:"))
for name, (wall, cpu) in python_rows:
    print(row(name, f"{wall:.2f}", f"{wall / python_rows[0][1][0]:.2f}x", f"{cpu:.2f}"))
