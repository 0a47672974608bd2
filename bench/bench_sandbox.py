"""Sandboxed `terminal.run` of `true` against a plain subprocess and a bare bubblewrap, and a sandboxed
python.exec of `print(1)` against a plain `/usr/bin/python3 -c` (the interpreter the sandbox runs), in one run.

Every candidate runs once per round, the rounds interleaved (so load that comes and goes hits them alike),
each call followed by an untimed 20 ms pause (`BENCH_PACE_S`), as a model's calls come apart: what a run
leaves for the kernel (namespace teardown in kernel workers) and a zygote's next spare are then made between
calls, for every candidate alike. The table gives the median wall time over the rounds and the mean CPU
time per run (kernel workers' time is nobody's here): tether's and its
reaped children's, the fork server's and its reaped children's (bubblewrap), and the zygotes' with the
spares they reaped (a run's own processes). Unlike wall time, CPU barely moves when other work competes
for the cores.

"bare bwrap" is the bwrap command line one bubblewrap per run builds (namespaces, binds, tmpfs mounts,
seccomp), started with subprocess.run as the sandbox's uid: what bubblewrap costs by itself.
"Sandbox.run (zygote)" takes a spare of the configuration's zygote (made in the warm-up): a fork and an
exec inside, plus the cgroup and capture. "(one bubblewrap per run)" is the fallback path, started from the
fork server, with the workspace quota's overlay laid by its pre-exec step; "no quota overlay" is the same
path without it (what it cost before the quota held there). `terminal.run` adds the tool layer (cwd containment, result) on the zygote path.
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
from tether.sandbox import _forkserver as forkserver  # its CPU is part of the cost
from tether.sandbox import _zygote as zygote  # on and off
from tether.sandbox._bwrap import BwrapPlan, find_bwrap
from tether.sandbox._sandbox import _seccomp_fd  # pyright: ignore[reportPrivateUsage]  # the same filter

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "200"))
PY_ROUNDS = int(os.environ.get("BENCH_PY_ROUNDS", "60"))
PACE_S = float(os.environ.get("BENCH_PACE_S", "0.02"))
_TICK = os.sysconf("SC_CLK_TCK")


def _stat_cpu(pid: int) -> float:
    """utime + stime + cutime + cstime of `pid`, in seconds (0 when it is gone)."""
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / _TICK
    return 0.0


def _zygote_pids() -> list[int]:
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if b"zygote's program" in Path(entry.path, "cmdline").read_bytes():
                    found.append(int(entry.name))
    return found


def cpu_s(zygotes: list[int]) -> float:
    """CPU seconds of tether, its reaped children, the fork server and the zygotes, with what they reaped."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    server = forkserver._server  # pyright: ignore[reportPrivateUsage]
    if server is not None and server.alive:
        total += _stat_cpu(server.proc.pid)
    return total + sum(_stat_cpu(pid) for pid in zygotes)


def interleaved(
    candidates: list[tuple[str, Callable[[], object]]], rounds: int
) -> dict[str, tuple[float, float]]:
    """{name: (median wall ms, mean CPU ms)}, every candidate once per round, in turn."""
    for _, fn in candidates:
        for _ in range(5):
            fn()
    zygotes = _zygote_pids()
    wall: dict[str, list[float]] = {name: [] for name, _ in candidates}
    cpu: dict[str, float] = dict.fromkeys(wall, 0.0)
    for index in range(rounds):
        turn = candidates[index % len(candidates) :] + candidates[: index % len(candidates)]
        for name, fn in turn:
            cpu_start = cpu_s(zygotes)
            start = time.perf_counter()
            fn()
            wall[name].append((time.perf_counter() - start) * 1000)
            time.sleep(PACE_S)  # (not timed) calls come apart, as a model's do: background work settles
            cpu[name] += cpu_s(zygotes) - cpu_start
    return {name: (statistics.median(wall[name]), cpu[name] * 1000 / rounds) for name in wall}


def tool(name: str, workspace: str) -> Callable[..., object]:
    found = exec_pack(workspace, enabled=True).get(name)
    assert found is not None
    assert found.function is not None
    return found.function


def one_bubblewrap_per_run(fn: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        zygote.enabled = False
        try:
            fn()
        finally:
            zygote.enabled = True

    return run


load_before = os.getloadavg()
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
    unquoted = Sandbox(workspace)
    unquoted._plain_quota = lambda: False  # pyright: ignore[reportPrivateUsage]  # the A/B: without the overlay
    terminal_run, python_exec = tool("terminal.run", workspace), tool("python.exec", workspace)
    true_rows = interleaved(
        [
            ("subprocess.run (no sandbox)", lambda: subprocess.run(["true"], check=True)),
            ("bare bwrap, same command line", bare),
            ("Sandbox.run (zygote)", lambda: sandbox.run(["true"])),
            ("Sandbox.run (one bubblewrap per run)", one_bubblewrap_per_run(lambda: sandbox.run(["true"]))),
            (
                "Sandbox.run (one bubblewrap per run, no quota overlay)",
                one_bubblewrap_per_run(lambda: unquoted.run(["true"])),
            ),
            ("terminal.run tool (zygote)", lambda: terminal_run(cmd=["true"])),
        ],
        ROUNDS,
    )
    python_rows = interleaved(
        [
            (
                "/usr/bin/python3 -c 'print(1)' (no sandbox)",
                lambda: subprocess.run(
                    ["/usr/bin/python3", "-c", "print(1)"], check=True, capture_output=True
                ),
            ),
            ("python.exec tool, print(1) (zygote)", lambda: python_exec(code="print(1)")),
        ],
        PY_ROUNDS,
    )
    works, path = zygote.status()
    assert works, path

print(
    f"(uid {os.geteuid()}, {cgroup_support().reason}; load average {load_before[0]:.2f} before, "
    f"{os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores; {ROUNDS} rounds, calls {PACE_S * 1000:g} ms apart)\n"
)
print(row("run of `true`", "median wall ms", "over plain ms", "over bare bwrap ms", "CPU ms per run"))
print(row("---", "---:", "---:", "---:", "---:"))
plain, bare_bwrap = true_rows["subprocess.run (no sandbox)"][0], true_rows["bare bwrap, same command line"][0]
for name, (wall, cpu) in true_rows.items():
    print(row(name, f"{wall:.2f}", f"{wall - plain:.2f}", f"{wall - bare_bwrap:.2f}", f"{cpu:.2f}"))
print()
print(row("run", "median wall ms", "ratio to plain", "CPU ms per run"))
print(row("---", "---:", "---:", "---:"))
python_plain = next(iter(python_rows.values()))[0]
for name, (wall, cpu) in python_rows.items():
    print(row(name, f"{wall:.2f}", f"{wall / python_plain:.2f}x", f"{cpu:.2f}"))
