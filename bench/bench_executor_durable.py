"""Durable runs: what a journaled call costs, SQLite and PostgreSQL beside a memory journal and none, in one run.

Rows, each measured in a fresh child process (so one journal's state or threads never weigh on another's),
the children alternating, `ROUNDS` rounds; the table gives medians over rounds:

- sequential: `add` (every guard: `why`, scope, rate limit, quotas, idempotency) called one call after
  another; CPU µs a call (`time.process_time`: every thread of the process, checkpoints included) and wall µs.
- 50 concurrent: `execute_all` of 50 calls to a tool that sleeps 10 ms, `max_concurrency=50`: wall ms and
  CPU ms a batch (each batch in an event loop of its own), and the journal's commits a batch (SQLite:
  counted on its connections).
- a loop a call: `add` called once in an event loop of its own (`anyio.run`), again and again, as
  `Agent.run_sync` runs each turn: CPU and wall µs a call, the loop's making included.

Journals: none (a journal that keeps nothing: the executor's own cost), `MemoryJournal`, `SqlJournal` on a
SQLite file (WAL), and on a throwaway local PostgreSQL server (fsync on, as a real server) when its binaries
and psycopg are installed. The SQLite floor ("sqlite-floor", sequential only, this code's schema): the least
any runtime pays for the same guarantee, no executor: a call's intent and result rows (the same columns and
values, JSON encoded the same way, the columns a row leaves NULL left out) as two autocommit INSERTs on a raw `sqlite3` connection in WAL with
`synchronous=NORMAL`, the result naming the intent by its `lastrowid`; measured whenever SQLite is.

`BASELINE=<git rev>` also measures that revision's `src/` (checked out with `git archive` into a temp dir)
side by side, alternating with this one: on a loaded machine only such pairs can be compared. `ROUNDS`
(default 5) sets the rounds, `KINDS` (e.g. `sqlite,postgresql`) the journals. Command: `BASELINE=main uv run --frozen python bench/bench_executor_durable.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SEQUENTIAL = {"none": 3000, "memory": 3000, "sqlite-floor": 3000, "sqlite": 1500, "postgresql": 150}
BATCHES = {"none": 15, "memory": 15, "sqlite": 15, "postgresql": 5}
LOOPS = {"none": 300, "memory": 300, "sqlite": 300, "postgresql": 60}
"""Calls each made in an event loop of its own (`anyio.run` a call, as `Agent.run_sync` a turn)."""
FLOOR = "sqlite-floor"
"""Measured once a round (it runs no tether code but the schema's), in its own child."""


def sqlite_floor(n: int) -> dict[str, float]:
    """Two autocommit INSERTs a call (the intent, then the result naming it) on a raw `sqlite3` connection."""
    import hashlib
    import socket
    import sqlite3

    import pydantic_core

    from tether.store import SqlJournal

    tmp = tempfile.mkdtemp(prefix="tether-bench-floor-")
    path = f"{tmp}/journal.db"
    SqlJournal(f"sqlite:///{path}").close()  # the same table and indexes as tether's
    connection = sqlite3.connect(path, isolation_level=None)  # autocommit: each INSERT commits
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    # every column but those a row leaves NULL (for those `sqlite3` would look up an adapter, as tether does not)
    common = (
        "kind, call_id, tool, created_at, session_id, run_id, idempotency_key, side_effects, principal, why, "
    )
    common += "arguments, annotations, repairs, repaired, envelope, pid, host, extra"
    intent_insert = f"INSERT INTO tether_journal ({common}) VALUES ({', '.join('?' * 18)})"
    insert = f"INSERT INTO tether_journal ({common}, intent_id, outcome, duration_ms) VALUES ({', '.join('?' * 21)})"
    pid, host, stamp = os.getpid(), socket.gethostname(), f"floor-{os.getpid()}-{time.time_ns()}"
    arguments = {"a": 2, "b": 3}
    why = "Add the two subtotals for the invoice"

    def calls(n: int, tag: str) -> tuple[float, float]:
        # keys as tether's (SHA-256 hex: each lands at a random place in the key's index), made beforehand
        keys = [hashlib.sha256(f"{stamp}-{tag}-{i}".encode()).hexdigest() for i in range(n)]
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(n):
            call_id, key = f"{stamp}-{tag}-{i}", keys[i]
            args = pydantic_core.to_json(arguments).decode()
            intent = connection.execute(
                intent_insert,
                ("intent", call_id, "add", time.time(), "bench", "r1", key, "idempotent", "u1", why,
                 args, "[]", "[]", 0, "null", pid, host, "{}"),
            ).lastrowid  # fmt: skip
            envelope = pydantic_core.to_json({"ok": True, "data": 5}).decode()
            connection.execute(
                insert,
                ("result", call_id, "add", time.time(), "bench", "r1", key, "idempotent", "u1", why,
                 args, "[]", "[]", 0, envelope, pid, host, "{}", intent, "ok", 0.01),
            )  # fmt: skip
        return (time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6

    try:
        calls(max(n // 5, 20), "warm")
        seq = [calls(n, f"s{r}") for r in range(3)]
    finally:
        connection.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "seq_cpu_us": statistics.median(s[0] for s in seq),
        "seq_wall_us": statistics.median(s[1] for s in seq),
    }


def child(kind: str, url: str | None) -> dict[str, float]:
    """Measure one journal kind in this process (the code on `sys.path`, current or baseline)."""
    if kind == FLOOR:
        return sqlite_floor(SEQUENTIAL[kind])
    import anyio

    from tether.execution import Executor, Policy, Principal, Run
    from tether.store import Lookup, MemoryJournal, SqlJournal
    from tether.tools import Toolset, tool
    from tether.types import RateLimit, ToolCall

    @tool(
        side_effects="idempotent",
        requires_why=True,
        scopes=("math",),
        rate_limit=RateLimit(calls=10**9, per_seconds=1),
    )
    async def add(a: int, b: int) -> int:
        return a + b

    @tool(side_effects="idempotent")
    async def nap(n: int) -> str:
        await anyio.sleep(0.010)
        return "rested"

    class NoJournal:
        """Keeps nothing: every call is new, every entry gets an id."""

        blocking = False

        def __init__(self) -> None:
            self.next_id = 0

        def append(self, entry: Any) -> Any:
            self.next_id += 1
            entry.id = self.next_id
            return entry

        def claim(self, intent: Any) -> Lookup:
            self.append(intent)
            return Lookup("new")

        def lookup(self, key: str) -> Lookup:
            return Lookup("new")

        def in_doubt(self) -> list[Any]:
            return []

    tmp = tempfile.mkdtemp(prefix="tether-bench-durable-")
    if kind == "none":
        journal: Any = NoJournal()
    elif kind == "memory":
        journal = MemoryJournal()
    else:
        journal = SqlJournal(url or f"sqlite:///{tmp}/journal.db")
    commits = _commit_counter(journal)
    policy = Policy(max_calls_per_run=10**9, max_output_bytes_per_run=10**12, max_wall_time_s_per_run=10**6)
    principal = Principal("u1", frozenset({"math"}))
    raw = '{"a": 2, "b": 3, "why": "Add the two subtotals for the invoice"}'
    stamp = f"{os.getpid()}-{time.time_ns()}"

    async def sequential(n: int, tag: str) -> tuple[float, float]:
        executor = Executor(Toolset(add), policy=policy, journal=journal)
        run = Run(principal=principal, session_id="bench")
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(n):
            call = ToolCall(id=f"{stamp}-{tag}-{i}", name="add", arguments=json.loads(raw))
            assert (await executor.execute(call, run)).ok
        return (time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6

    async def fifty(tag: str) -> tuple[float, float, int]:
        executor = Executor(Toolset(nap), policy=Policy(max_concurrency=50), journal=journal)
        calls = [ToolCall(id=f"{stamp}-{tag}-{i}", name="nap", arguments={"n": i}) for i in range(50)]
        before = commits(True)
        cpu, wall = time.process_time(), time.perf_counter()
        results = await executor.execute_all(calls, Run(session_id="bench"))
        elapsed = (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3
        after = commits(False)
        assert all(r.ok for r in results)
        return *elapsed, -1 if before < 0 else after - before

    n = SEQUENTIAL[kind]
    try:
        anyio.run(sequential, max(n // 5, 20), "warm")
        seq = [anyio.run(sequential, n, f"s{r}") for r in range(3)]
        batches = [anyio.run(fifty, f"b{r}") for r in range(BATCHES[kind])]
        loops: list[tuple[float, float]] = []
        for r in range(3):
            cpu, wall = time.process_time(), time.perf_counter()
            for i in range(LOOPS[kind]):
                anyio.run(sequential, 1, f"l{r}-{i}")
            loops.append(
                (
                    (time.process_time() - cpu) / LOOPS[kind] * 1e6,
                    (time.perf_counter() - wall) / LOOPS[kind] * 1e6,
                )
            )
    finally:
        if hasattr(journal, "close"):
            journal.close()
        shutil.rmtree(tmp, ignore_errors=True)  # the SQLite file and its WAL
    return {
        "seq_cpu_us": statistics.median(s[0] for s in seq),
        "seq_wall_us": statistics.median(s[1] for s in seq),
        "fifty_wall_ms": statistics.median(b[0] for b in batches),
        "fifty_cpu_ms": statistics.median(b[1] for b in batches),
        "fifty_commits": statistics.median(b[2] for b in batches),
        "loop_cpu_us": statistics.median(x[0] for x in loops),
        "loop_wall_us": statistics.median(x[1] for x in loops),
    }


def _commit_counter(journal: Any) -> Any:
    """`count(on)`: start (`on=True`) or stop counting commits on a SQLite journal's connections, returning
    the count so far (-1 where they cannot be counted). Counting is a Python callback a statement: it is on
    only around the concurrent batches, never while sequential calls are timed."""
    import sqlite3

    counted = [0]
    writer = getattr(journal, "_writer", None)
    connections = [getattr(writer, name, None) for name in ("_connection", "_now")] if writer else []
    found = [getattr(c, "driver_connection", c) for c in connections if c is not None]
    found = [c for c in found if isinstance(c, sqlite3.Connection)]

    def trace(sql: str) -> None:
        counted[0] += sql == "COMMIT" or (sql.startswith("INSERT") and not in_transaction[0])
        in_transaction[0] = sql.startswith("BEGIN") or (in_transaction[0] and sql != "COMMIT")

    in_transaction = [False]

    def count(on: bool) -> int:
        for connection in found:
            connection.set_trace_callback(trace if on else None)
        return counted[0] if found else -1

    return count


def measure(src: Path, kind: str, url: str | None) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, __file__, "--child", kind, url or ""]
    done = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    sys.path.insert(0, str(HERE))
    from bench_executor import postgres

    baseline = os.environ.get("BASELINE")
    rounds = int(os.environ.get("ROUNDS", "5"))
    with tempfile.TemporaryDirectory() as tmp, postgres() as server:
        sides = {"this": Path(tmp) / "this" / "src"}  # a copy: edits made while it runs do not leak in
        shutil.copytree(ROOT / "src", sides["this"], ignore=shutil.ignore_patterns("__pycache__"))
        if baseline:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", baseline, "src"], check=True, capture_output=True
            )
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            sides[baseline] = Path(tmp) / "src"
        kinds = ["none", "memory", FLOOR, "sqlite"] + (["postgresql"] if server else [])
        if os.environ.get("KINDS"):  # e.g. KINDS=sqlite,postgresql
            wanted = os.environ["KINDS"].split(",")
            kinds = [k for k in kinds if k in wanted or (k == FLOOR and "sqlite" in wanted)]
        urls: dict[str, str | None] = {}
        for side in sides:
            urls[side] = _database(server, f"bench_{len(urls)}") if server else None
        samples: dict[tuple[str, str], list[dict[str, float]]] = {}
        load = [_load()]
        for _ in range(rounds):
            for kind in kinds:
                for side, src in sides.items():
                    if kind == FLOOR and side != "this":
                        continue
                    url = urls[side] if kind == "postgresql" else None
                    samples.setdefault((side, kind), []).append(measure(src, kind, url))
        load.append(_load())
    print(f"load average (1, 5, 15 min) before: {load[0]}; after: {load[1]}; {rounds} rounds, medians\n")
    print("| journal | code | sequential CPU µs a call | sequential wall µs a call "
          "| 50 concurrent: wall ms | CPU ms | commits | a loop a call: CPU µs | wall µs |")  # fmt: skip
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind in kinds:
        for side in sides:
            if (side, kind) not in samples:
                continue
            got = samples[(side, kind)]

            def med(name: str, got: list[dict[str, float]] = got) -> float:
                return statistics.median(g[name] for g in got)

            sequential = f"| {kind} | {'-' if kind == FLOOR else side} | {med('seq_cpu_us'):.1f} | {med('seq_wall_us'):.1f} "
            if kind == FLOOR:
                print(f"{sequential}| - | - | - | - | - |")
                continue
            commits = med("fifty_commits")
            print(
                f"{sequential}| {med('fifty_wall_ms'):.1f} | {med('fifty_cpu_ms'):.1f} | "
                f"{'-' if commits < 0 else f'{commits:.0f}'} | {med('loop_cpu_us'):.1f} | {med('loop_wall_us'):.1f} |"
            )


def _database(server: str, name: str) -> str:
    import psycopg
    from psycopg import sql

    admin = server.replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return server.rsplit("/", 1)[0] + f"/{name}"


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(child(sys.argv[2], sys.argv[3] or None)))
    else:
        main()
