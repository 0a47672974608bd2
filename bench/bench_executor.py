"""The executor's cost per call, and 50 concurrent calls to a tool that sleeps 10 ms.

Per call: the floor is what any runtime must do (`json.loads` of the arguments, pydantic validation, a
direct call of the async tool); tether adds every guard (unknown tool, schema, why, scopes, rate limit,
quotas, repaired-call policy, idempotency), the Kalygo record, and the journal: in memory ("off"), a SQLite
file in WAL mode or a local PostgreSQL server started for the run ("on": a rate-limit token, the idempotency
claim with the intent row before the tool, the result row after, each committed).

Then the calls an agent's loop makes (issue 13's targets), each in fresh child processes interleaved
`BENCH_ROUNDS` times (3), medians: an async tool declaring nothing a guard checks, `side_effects="none"`
and the default ("mutating": keyed for idempotency, claimed in the journal, the repaired-call guard), called
through `execute_all` one at a time; and 50 calls to a tool that sleeps 10 ms at default settings.
`BENCH_BASELINE=<a checkout's src directory>` runs the same children with that tether first on `PYTHONPATH`,
interleaved with this one's (an A/B on a busy machine).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import glob
import importlib.util
import json
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
from pydantic import TypeAdapter
from sqlalchemy import create_engine
from typing_extensions import TypedDict

from _timing import row
from tether.execution import Executor, Policy, Principal, Run
from tether.store import Journal, MemoryJournal, SqlJournal
from tether.tools import Toolset, tool
from tether.types import RateLimit, ToolCall


class AddArgs(TypedDict):
    a: int
    b: int


@tool(
    side_effects="idempotent",
    requires_why=True,
    scopes=("math",),
    rate_limit=RateLimit(calls=10**9, per_seconds=1),
)
async def add(a: int, b: int) -> int:
    return a + b


@tool(side_effects="none")
async def nap() -> str:
    await anyio.sleep(0.010)
    return "rested"


RAW = '{"a": 2, "b": 3, "why": "Add the two subtotals for the invoice"}'
POLICY = Policy(max_calls_per_run=10**9, max_output_bytes_per_run=10**12, max_wall_time_s_per_run=10**6)
PRINCIPAL = Principal("u1", frozenset({"math"}))
floor_adapter = TypeAdapter(AddArgs)


async def floor_calls(n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        arguments = json.loads(RAW)
        why = arguments.pop("why")
        assert why
        checked = floor_adapter.validate_python(arguments)
        await add.function(**checked)  # pyright: ignore[reportOptionalCall]
    return (time.perf_counter() - start) / n


async def tether_calls(n: int, journal: Journal, offset: int) -> float:
    executor = Executor(Toolset(add), policy=POLICY, journal=journal)
    run = Run(principal=PRINCIPAL, session_id="bench")
    start = time.perf_counter()
    for i in range(n):
        call = ToolCall(id=f"c{offset + i}", name="add", arguments=json.loads(RAW))
        envelope = await executor.execute(call, run)
        assert envelope.ok
    return (time.perf_counter() - start) / n


def best_of(fn: object, repeat: int = 5) -> float:
    return min(anyio.run(fn) for _ in range(repeat))  # pyright: ignore[reportArgumentType, reportUnknownArgumentType, reportUnknownVariableType]


@contextlib.contextmanager
def postgres() -> Iterator[str | None]:
    """A throwaway PostgreSQL server (as the tests start one), or None without its binaries or psycopg."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not found or importlib.util.find_spec("psycopg") is None:
        yield None
        return
    bindir = Path(found[-1]).parent
    base = Path(tempfile.mkdtemp(prefix="tether-bench-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: run the server as `postgres`
        user = pwd.getpwnam("postgres")
        os.chown(base, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = base / "data"
    run = functools.partial(subprocess.run, check=True, capture_output=True)
    run([*prefix, str(bindir / "initdb"), "-D", str(data), "-U", "tether", "--auth=trust", "-E", "UTF8"])
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1"  # fsync on, as a real server
    run(
        [
            *prefix,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(base / "log"),
            "-w",
            "start",
        ]
    )
    try:
        yield f"postgresql+psycopg://tether@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], check=False
        )
        shutil.rmtree(base, ignore_errors=True)


def per_call() -> None:
    memory = MemoryJournal()
    counter = iter(range(10**9))
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = SqlJournal(f"sqlite:///{Path(tmp) / 'journal.db'}")
        floor = best_of(lambda: floor_calls(20_000))
        off = best_of(lambda: tether_calls(5_000, memory, next(counter) * 10**6))
        on = best_of(lambda: tether_calls(500, sqlite, next(counter) * 10**6))
        sqlite.close()
    with postgres() as url:
        pg: dict[str, float] = {}
        if url is not None:
            journal = SqlJournal(url)
            pg["PostgreSQL 15, local"] = best_of(lambda: tether_calls(200, journal, next(counter) * 10**6), 3)
            journal.close()
            # the server still has every commit when tether's process dies (what in-doubt detection needs),
            # but does not wait for its WAL to reach the disk
            engine = create_engine(url, connect_args={"options": "-c synchronous_commit=off"})
            journal = SqlJournal(url, engine=engine)
            pg["PostgreSQL, synchronous_commit=off"] = best_of(
                lambda: tether_calls(500, journal, next(counter) * 10**6)
            )
            journal.close()
    print(row("per call (sequential)", "µs per call", "overhead over floor µs"))
    print(row("---", "---:", "---:"))
    print(row("floor: json.loads + pydantic validate + direct call", f"{floor * 1e6:.1f}", "0"))
    print(row("tether: all guards, journal off (memory)", f"{off * 1e6:.1f}", f"{(off - floor) * 1e6:.1f}"))
    print(row("tether: all guards, journal on (SQLite WAL)", f"{on * 1e6:.1f}", f"{(on - floor) * 1e6:.1f}"))
    for name, cost in pg.items():
        print(
            row(
                f"tether: all guards, journal on ({name})", f"{cost * 1e6:.1f}", f"{(cost - floor) * 1e6:.1f}"
            )
        )


async def gather_floor() -> float:
    start = time.perf_counter()
    await asyncio.gather(*(nap.function() for _ in range(50)))  # pyright: ignore[reportOptionalCall]
    return time.perf_counter() - start


async def fifty(journal: Journal, batch: int) -> float:
    executor = Executor(Toolset(nap), policy=Policy(max_concurrency=50), journal=journal)
    calls = [ToolCall(id=f"b{batch}-{i}", name="nap") for i in range(50)]
    start = time.perf_counter()
    results = await executor.execute_all(calls, Run(session_id="bench"))
    elapsed = time.perf_counter() - start
    assert all(r.ok for r in results)
    return elapsed


def concurrent() -> None:
    runs = 20
    floor = statistics.median(anyio.run(gather_floor) for _ in range(runs))
    memory = MemoryJournal()
    off = statistics.median(anyio.run(fifty, memory, i) for i in range(runs))
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = SqlJournal(f"sqlite:///{Path(tmp) / 'journal.db'}")
        on = statistics.median(anyio.run(fifty, sqlite, i) for i in range(runs))
        sqlite.close()
    print()
    print(row("50 concurrent calls, tool sleeps 10 ms", "median wall ms"))
    print(row("---", "---:"))
    print(row("floor: asyncio.gather of 50 direct calls", f"{floor * 1e3:.1f}"))
    print(row("tether execute_all, journal off (memory)", f"{off * 1e3:.1f}"))
    print(row("tether execute_all, journal on (SQLite WAL)", f"{on * 1e3:.1f}"))


async def loop_calls(side_effects: str, n: int) -> tuple[float, float]:
    """Wall (best of 15 rounds) and CPU (median) µs a call of an async tool declaring nothing a guard checks,
    as the loop calls it."""

    async def plus(a: int, b: int) -> int:
        """Add."""
        return a + b

    declared = tool(side_effects="none")(plus) if side_effects == "none" else tool()(plus)
    executor = Executor(Toolset(declared))
    run = Run(session_id="bench")

    async def batch(offset: int) -> None:
        for i in range(n):
            call = ToolCall(id=f"c{offset + i}", name="plus", arguments={"a": i, "b": 3})
            envelopes = await executor.execute_all([call], run)
            assert envelopes[0].ok

    await batch(-n)  # warm
    walls: list[float] = []
    cpus: list[float] = []
    for round_ in range(15):
        cpu, start = time.process_time(), time.perf_counter()
        await batch(round_ * n)
        walls.append((time.perf_counter() - start) / n * 1e6)
        cpus.append((time.process_time() - cpu) / n * 1e6)
    return min(walls), statistics.median(cpus)  # the quickest round: interference only ever slows one


async def fan_out(runs: int) -> float:
    """Median wall ms of 50 calls to a tool that sleeps 10 ms, at default settings."""
    executor = Executor(Toolset(nap))
    times: list[float] = []
    for r in range(runs + 5):
        calls = [ToolCall(id=f"f{r}-{i}", name="nap") for i in range(50)]
        start = time.perf_counter()
        results = await executor.execute_all(calls, Run())
        if r >= 5:
            times.append(time.perf_counter() - start)
        assert all(e.ok for e in results)
    return statistics.median(times) * 1e3


def child() -> None:
    none = anyio.run(loop_calls, "none", 400)
    mutating = anyio.run(loop_calls, "mutating", 400)
    floor = statistics.median(anyio.run(gather_floor) for _ in range(40))
    fifty = anyio.run(fan_out, 40)
    print("RESULT " + json.dumps({"none": none, "mutating": mutating, "floor": floor * 1e3, "fifty": fifty}))


def spawn(source: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, __file__, "--child"], capture_output=True, text=True, check=True, env=env
    )
    line = next(x for x in reversed(done.stdout.splitlines()) if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def loop_kinds() -> None:
    baseline = os.environ.get("BENCH_BASELINE", "")
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    sources = {"this": None, **({"baseline": baseline} if baseline else {})}
    seen: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
    for _ in range(rounds):
        for name, source in sources.items():
            seen[name].append(spawn(source))

    def median(name: str, key: str, index: int | None = None) -> float:
        return statistics.median(r[key] if index is None else r[key][index] for r in seen[name])

    print()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {rounds} rounds of fresh processes")
    print(
        row(
            "the loop's kind of call, per call (µs)",
            *[f"{n}: best wall" for n in sources],
            *[f"{n}: CPU" for n in sources],
        )
    )
    print(row("---", *["---:"] * (2 * len(sources))))
    for kind in ("none", "mutating"):
        print(
            row(
                f'async tool, side_effects="{kind}"'
                if kind == "none"
                else "async tool, default side effects (mutating)",
                *[f"{median(n, kind, 0):.1f}" for n in sources],
                *[f"{median(n, kind, 1):.1f}" for n in sources],
            )
        )
    print(
        row(
            "mutating over none",
            *[f"{median(n, 'mutating', 0) - median(n, 'none', 0):.1f}" for n in sources],
            *[f"{median(n, 'mutating', 1) - median(n, 'none', 1):.1f}" for n in sources],
        )
    )
    print()
    print(row("50 calls, tool sleeps 10 ms, default settings", *[f"{n}: median ms" for n in sources]))
    print(row("---", *["---:"] * len(sources)))
    print(row("floor: asyncio.gather of 50 direct calls", *[f"{median(n, 'floor'):.2f}" for n in sources]))
    print(row("tether execute_all, Policy()", *[f"{median(n, 'fifty'):.2f}" for n in sources]))


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        per_call()
        concurrent()
        loop_kinds()
