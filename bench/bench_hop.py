"""What a thread hop costs on this machine, and where the time goes.

A sync tool runs off the event loop: the loop hands it to a worker thread and sleeps; the worker wakes, runs
it, hands the result back and wakes the loop. Each row is the median of many round trips of a function that
does nothing (µs wall, and the process's CPU a trip), so what it measures is the handoff alone:

- `processes, pipe`: two processes ping-pong one byte over two pipes: two sleeping-thread wake-ups a round
  trip, nothing else (no GIL, no Python object shared): the operating system's (and the VM's) floor. Run
  unpinned, both on one vCPU (a wake-up is a context switch, no inter-processor interrupt) and on two
  (a wake-up is an interrupt to the other vCPU, which must leave its idle halt: a VM exit and entry).
- `processes, spinning`: the same ping-pong over shared memory with both sides busy-polling (no sleep, no
  wake-up; it burns both vCPUs while it runs): what the handoff costs when nobody sleeps.
- `threads, pipe` / `threads, lock`: two threads of one process, the same ping-pong: the wake-ups plus
  the GIL, which the woken thread must take back from the other.
- the hops event loops use: `run_in_executor` (concurrent.futures + `call_soon_threadsafe`), `to_thread`
  (the same plus a context copy), anyio's `to_thread.run_sync`, uvloop's `run_in_executor`, and tether's
  `run_in_worker`, each also split into its two legs: loop -> worker (submitted to the function's first line)
  and worker -> loop (the function's last line to the caller resuming).

"idle" is the machine as it is (vCPUs halt when they have nothing to run); "loaded" keeps both vCPUs busy
with a spinning process at nice 19 per CPU, which any woken thread preempts at once: no vCPU ever halts, so
what the idle rows cost above the loaded ones is the wake-up of a halted vCPU.

A second table puts the hop in a real run: `bench_loop`'s tether-sync runs (1 and 5 tool turns) in one
process, the hop swapped run by run (interleaved), so that what a hop costs a tool turn is read beside the
same turn with no hop and with `inline=True`. A third splits `bench_loop`'s 50 x 10 ms fan-out into phases
(the model turn that reads the 50 calls, the wait for the first tool to start, the spread of the starts, how
late the last sleep ends, what follows it), for tether with async tools and tether-sync, interleaved.

Command: `uv run --frozen --all-extras --group bench python bench/bench_hop.py` (`HOP_TRIPS`, default 3000;
`HOP_ROUNDS`, default 3: every row that many times, interleaved, each keeping its lowest median;
`HOP_ONLY=asyncio,tether,turn,fanout` runs the rows whose names contain one of these (`turn`, `fanout`: those
tables); `BENCH_BASELINE=<a checkout's
src>` adds rows with that checkout's `tether._threads`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.util
import multiprocessing
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing import shared_memory
from typing import Any

from _timing import row

TRIPS = int(os.environ.get("HOP_TRIPS", "3000"))
BASELINE = os.environ.get("BENCH_BASELINE", "")
"""A checkout's `src` directory: its `tether._threads` gets rows of its own (`baseline`), interleaved."""
ROUNDS = int(os.environ.get("HOP_ROUNDS", "3"))
CPUS = sorted(os.sched_getaffinity(0))


class Trips:
    """Round-trip times (s) and CPU seconds of the whole process over them; legs when a row splits them."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu = 0.0
        self.there: list[float] = []
        self.back: list[float] = []

    def summary(self) -> tuple[float, float, float | None, float | None]:
        """Median µs a trip, CPU µs a trip, and the legs' medians (µs) if measured."""

        def median(xs: list[float]) -> float | None:
            return statistics.median(xs) * 1e6 if xs else None

        return (
            statistics.median(self.wall) * 1e6,
            self.cpu / len(self.wall) * 1e6,
            median(self.there),
            median(self.back),
        )


# ------------------------------------------------------------------------------------ the OS's floor


def _pipe_echo(inbound: int, outbound: int, cpu: int | None) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    while os.read(inbound, 1) != b"q":
        os.write(outbound, b"x")


def processes_pipe(cpus: tuple[int, int] | None) -> Trips:
    """Two processes, one byte each way over pipes: two wake-ups a trip."""
    from_parent, to_child = os.pipe()
    from_child, to_parent = os.pipe()
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_pipe_echo, args=(from_parent, to_parent, cpus[1] if cpus else None))
    child.start()
    before = os.sched_getaffinity(0)
    if cpus is not None:
        os.sched_setaffinity(0, {cpus[0]})
    try:
        out = Trips()
        for _ in range(200):
            os.write(to_child, b"x")
            os.read(from_child, 1)
        cpu = time.process_time()
        for _ in range(TRIPS):
            start = time.perf_counter()
            os.write(to_child, b"x")
            os.read(from_child, 1)
            out.wall.append(time.perf_counter() - start)
        out.cpu = time.process_time() - cpu  # this side only: the other side's is the same
        out.cpu *= 2
        return out
    finally:
        os.sched_setaffinity(0, before)
        os.write(to_child, b"q")
        child.join()
        for fd in (to_child, from_parent, from_child, to_parent):
            os.close(fd)


def _spin_echo(name: str) -> None:
    memory = shared_memory.SharedMemory(name)
    buffer = memory.buf
    assert buffer is not None
    seen = 0
    while True:
        value = buffer[0]
        if value == seen:
            continue
        if value == 255:
            break
        seen = value
        buffer[1] = value
    del buffer
    memory.close()


def processes_spinning() -> Trips:
    """Two processes busy-polling one shared byte each way: no sleep, no wake-up."""
    memory = shared_memory.SharedMemory(create=True, size=2)
    buffer = memory.buf
    assert buffer is not None
    buffer[0] = buffer[1] = 0
    child = multiprocessing.get_context("fork").Process(target=_spin_echo, args=(memory.name,))
    child.start()
    try:
        out = Trips()
        value = 0
        cpu = time.process_time()
        for n in range(TRIPS // 3 + 200):
            value = value % 250 + 1
            start = time.perf_counter()
            buffer[0] = value
            while buffer[1] != value:
                pass
            if n >= 200:
                out.wall.append(time.perf_counter() - start)
        out.cpu = (time.process_time() - cpu) * 2 * len(out.wall) / (TRIPS // 3 + 200)
        return out
    finally:
        buffer[0] = 255
        child.join()
        del buffer
        memory.close()
        memory.unlink()


# ------------------------------------------------------------------------------- threads and the GIL


def threads_pipe() -> Trips:
    """Two threads of one process, one byte each way over pipes: the wake-ups plus the GIL."""
    to_echo, echo_in = os.pipe()
    echo_out, from_echo = os.pipe()
    echo = threading.Thread(target=_pipe_echo, args=(to_echo, from_echo, None), daemon=True)
    echo.start()
    try:
        out = Trips()
        for _ in range(200):
            os.write(echo_in, b"x")
            os.read(echo_out, 1)
        cpu = time.process_time()
        for _ in range(TRIPS):
            start = time.perf_counter()
            os.write(echo_in, b"x")
            os.read(echo_out, 1)
            out.wall.append(time.perf_counter() - start)
        out.cpu = time.process_time() - cpu
        return out
    finally:
        os.write(echo_in, b"q")
        echo.join()
        for fd in (to_echo, echo_in, echo_out, from_echo):
            os.close(fd)


def threads_lock() -> Trips:
    """Two threads handing a token back and forth with two locks (what `queue.SimpleQueue` waits on)."""
    ping, pong = threading.Lock(), threading.Lock()
    ping.acquire()
    pong.acquire()
    stop = False

    def echo() -> None:
        while True:
            ping.acquire()
            if stop:
                return
            pong.release()

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    out = Trips()
    for _ in range(200):
        ping.release()
        pong.acquire()
    cpu = time.process_time()
    for _ in range(TRIPS):
        start = time.perf_counter()
        ping.release()
        pong.acquire()
        out.wall.append(time.perf_counter() - start)
    out.cpu = time.process_time() - cpu
    stop = True
    ping.release()
    thread.join()
    return out


# ------------------------------------------------------------------------------- event loops' hops

STAMPS: list[float] = []


def stamped() -> None:
    """The tool: records when it starts (its end is the same moment, to a fraction of a µs)."""
    STAMPS.append(time.perf_counter())


async def hops(hop: Callable[[Callable[[], None]], Any]) -> Trips:
    """`await hop(stamped)` round trips, one at a time, with their two legs."""
    for _ in range(200):
        await hop(stamped)
    out = Trips()
    cpu = time.process_time()
    for _ in range(TRIPS):
        STAMPS.clear()
        start = time.perf_counter()
        await hop(stamped)
        end = time.perf_counter()
        out.wall.append(end - start)
        out.there.append(STAMPS[0] - start)
        out.back.append(end - STAMPS[0])
    out.cpu = time.process_time() - cpu
    return out


def executor_hop() -> Callable[[Callable[[], None]], Any]:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=64)

    def hop(function: Callable[[], None]) -> Any:
        return asyncio.get_running_loop().run_in_executor(pool, function)

    return hop


def anyio_hop() -> Callable[[Callable[[], None]], Any]:
    from anyio import to_thread

    return to_thread.run_sync


def tether_hop() -> Callable[[Callable[[], None]], Any]:
    from tether._threads import run_in_worker

    return run_in_worker


def baseline_module() -> Any:
    """The baseline checkout's `tether._threads` (standard library only), loaded beside this one's."""
    spec = importlib.util.spec_from_file_location(
        "baseline_threads", os.path.join(BASELINE, "tether", "_threads.py")
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def baseline_hop() -> Callable[[Callable[[], None]], Any]:
    return baseline_module().run_in_worker


def loop_row(make: Callable[[], Callable[[Callable[[], None]], Any]], *, uvloop: bool = False) -> Trips:
    hop = make()
    if uvloop:
        import uvloop as uv

        with asyncio.Runner(loop_factory=uv.new_event_loop) as runner:
            return runner.run(hops(hop))
    return asyncio.run(hops(hop))


ROWS: dict[str, Callable[[], Trips]] = {
    "processes, pipe, unpinned": lambda: processes_pipe(None),
    "processes, pipe, one vCPU": lambda: processes_pipe((CPUS[0], CPUS[0])),
    **({"processes, pipe, two vCPUs": lambda: processes_pipe((CPUS[0], CPUS[1]))} if len(CPUS) > 1 else {}),
    "processes, spinning (no sleep)": processes_spinning,
    "threads, pipe": threads_pipe,
    "threads, lock": threads_lock,
    "asyncio run_in_executor": lambda: loop_row(executor_hop),
    "asyncio.to_thread": lambda: loop_row(lambda: asyncio.to_thread),
    "anyio to_thread.run_sync": lambda: loop_row(anyio_hop),
    "uvloop run_in_executor": lambda: loop_row(executor_hop, uvloop=True),
    "tether run_in_worker": lambda: loop_row(tether_hop),
    **({"tether run_in_worker, baseline": lambda: loop_row(baseline_hop)} if BASELINE else {}),
}


# ---------------------------------------------------------------------------- the hop in a tool turn


async def turns() -> dict[str, tuple[float, float, float]]:
    """`bench_loop`'s tether-sync runs (1 and 5 tool turns) in one process, the hop swapped run by run:
    per extra tool turn (median and 10th percentile µs, CPU µs) with this checkout's hop, the baseline's,
    none (the sync branch calling the function on
    the loop: what is left is the hop's cost in a real run), and with `add` declared `inline=True`."""
    import bench_loop as loop_bench
    import tether.execution._invoke as invoke

    async def no_hop(function: Callable[[], Any], deadline: float | None = None) -> Any:
        return function()

    hops: dict[str, Callable[..., Any]] = {"this hop": invoke.run_in_worker, "no hop": no_hop}
    if BASELINE:
        hops["baseline's hop"] = baseline_module().run_in_worker
    systems = {name: loop_bench.Tether("openai", sync=True) for name in hops}
    systems["inline=True"] = loop_bench.Tether("openai", inline=True)
    hops["inline=True"] = invoke.run_in_worker
    times: dict[str, dict[str, list[float]]] = {
        n: {"one": [], "five": [], "one_cpu": [], "five_cpu": []} for n in hops
    }
    names = list(hops)
    for n in range(TRIPS // 10 + 50):
        for name in names if n % 2 else names[::-1]:
            invoke.run_in_worker = hops[name]
            for scenario, key in ((loop_bench.ONE, "one"), (loop_bench.FIVE, "five")):
                cpu, start = time.process_time(), time.perf_counter()
                await systems[name].run(scenario)
                if n >= 50:  # warmed up
                    times[name][key].append(time.perf_counter() - start)
                    times[name][key + "_cpu"].append(time.process_time() - cpu)
        loop_bench.STARTS.clear()

    def p10(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 10]

    def extra(t: dict[str, list[float]], q: Callable[[list[float]], float], kind: str = "") -> float:
        return (q(t["five" + kind]) - q(t["one" + kind])) / 4 * 1e6

    return {
        name: (extra(t, statistics.median), extra(t, p10), extra(t, statistics.median, "_cpu"))
        for name, t in times.items()
    }


FANOUT_PHASES = (
    "wall",
    "model turn (50 calls read)",
    "stream end to first tool start",
    "first to last tool start",
    "last sleep's end, late by",
    "last sleep's end to run end",
)


async def fanout() -> dict[str, list[tuple[float, float]]]:
    """`bench_loop`'s 50 x 10 ms fan-out (tether with async tools, tether-sync with this checkout's hop and
    the baseline's), split into phases by stamps: the model stream's end, each tool's start and the end of
    its sleep. Each phase's median and 10th percentile (ms), runs interleaved."""
    import bench_loop as loop_bench
    import tether.execution._invoke as invoke

    ends: list[float] = []
    stream_ended: list[float] = []

    async def nap() -> str:
        """Sleep 10 ms."""
        loop_bench.STARTS.append(time.perf_counter())
        await asyncio.sleep(loop_bench.NAP_S)
        ends.append(time.perf_counter())
        return "rested"

    def nap_sync() -> str:
        """Sleep 10 ms."""
        loop_bench.STARTS.append(time.perf_counter())
        time.sleep(loop_bench.NAP_S)
        ends.append(time.perf_counter())
        return "rested"

    loop_bench.nap, loop_bench.nap_sync = nap, nap_sync  # read when a system is made
    kinds: dict[str, tuple[Any, Callable[..., Any]]] = {
        "tether (async tools)": (loop_bench.Tether("openai"), invoke.run_in_worker),
        "tether-sync, this hop": (loop_bench.Tether("openai", sync=True), invoke.run_in_worker),
    }
    if BASELINE:
        baseline = baseline_module().run_in_worker
        kinds["tether-sync, baseline's hop"] = (loop_bench.Tether("openai", sync=True), baseline)
    for system, _ in kinds.values():
        model = system.agents[loop_bench.FIFTY].model
        stream = model.stream

        async def stamped_stream(request: Any, stream: Callable[..., Any] = stream) -> Any:
            async for chunk in stream(request):
                yield chunk
            stream_ended.append(time.perf_counter())

        model.stream = stamped_stream
    phases: dict[str, list[list[float]]] = {name: [] for name in kinds}
    names = list(kinds)
    for n in range(TRIPS // 20 + 10):
        for name in names if n % 2 else names[::-1]:
            system, hop = kinds[name]
            invoke.run_in_worker = hop
            loop_bench.STARTS.clear()
            ends.clear()
            stream_ended.clear()
            start = time.perf_counter()
            await system.run(loop_bench.FIFTY)
            end = time.perf_counter()
            await asyncio.sleep(0)
            if n < 10:  # warming up
                continue
            starts, done = sorted(loop_bench.STARTS), sorted(ends)
            phases[name].append(
                [
                    end - start,
                    stream_ended[0] - start,
                    starts[0] - stream_ended[0],
                    starts[-1] - starts[0],
                    done[-1] - starts[-1] - loop_bench.NAP_S,
                    end - done[-1],
                ]
            )
    invoke.run_in_worker = kinds["tether-sync, this hop"][1]

    def p10(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 10]

    return {
        name: [(statistics.median(c) * 1e3, p10(c) * 1e3) for c in ([r[i] for r in rows] for i in range(6))]
        for name, rows in phases.items()
    }


def _spin() -> None:
    os.nice(19)
    while True:
        pass


@contextlib.contextmanager
def loaded() -> Iterator[None]:
    """A spinning process at nice 19 on each vCPU, so that none ever halts."""
    context = multiprocessing.get_context("fork")
    spinners = [context.Process(target=_spin, daemon=True) for _ in CPUS]
    for spinner in spinners:
        spinner.start()
    time.sleep(0.2)
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.join()


def measure(only: list[str]) -> tuple[dict[str, Trips], dict[str, tuple[float, float, float]]]:
    names = [n for n in ROWS if not only or any(o in n for o in only)]
    kept: dict[str, Trips] = {}
    for _ in range(ROUNDS):
        for name in names:
            trips = ROWS[name]()
            if name not in kept or statistics.median(trips.wall) < statistics.median(kept[name].wall):
                kept[name] = trips
    in_turns = asyncio.run(turns()) if not only or "turn" in only else {}
    return kept, in_turns


def fanout_table() -> None:
    """The fan-out's phases (idle machine only: it is a run's wall time, which a spinning process would
    only stretch)."""
    split = asyncio.run(fanout())
    print()
    print(row("50 x 10 ms fan-out, ms: median (p10)", *split))
    print(row("---", *["---:"] * len(split)))
    for i, phase in enumerate(FANOUT_PHASES):
        print(row(phase, *(f"{v[i][0]:.2f} ({v[i][1]:.2f})" for v in split.values())))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    print(
        f"machine: {len(CPUS)} vCPUs, Python {sys.version.split()[0]}; {TRIPS} trips a row, {ROUNDS} rounds"
    )
    only = [n for n in os.environ.get("HOP_ONLY", "").split(",") if n]
    print(f"load average before: {load()}")
    idle, idle_turns = measure(only)
    print(f"load average after idle rows: {load()}")
    with loaded():
        busy, busy_turns = measure(only)
    print(f"load average after loaded rows: {load()}\n")

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:,.1f}"

    print(row("round trip of a no-op", "idle µs", "CPU µs", "to worker", "back", "loaded µs", "CPU µs",
              "to worker", "back"))  # fmt: skip
    print(row("---", *["---:"] * 8))
    for name in idle:
        a, b = idle[name].summary(), busy[name].summary()
        print(row(name, *(cell(x) for x in (*a, *b))))
    if idle_turns:
        print()
        print(row("tether-sync, per extra tool turn (one process)", "idle median µs", "p10", "CPU µs",
                  "loaded median µs", "p10", "CPU µs"))  # fmt: skip
        print(row("---", *["---:"] * 6))
        for name in idle_turns:
            print(row(name, *(cell(x) for x in (*idle_turns[name], *busy_turns[name]))))
    if not only or "fanout" in only:
        fanout_table()


if __name__ == "__main__":
    main()
