"""The executor's cost per call, and 50 concurrent calls to a tool that sleeps 10 ms.

Per call: the floor is what any runtime must do (`json.loads` of the arguments, pydantic validation, a
direct call of the async tool); tether adds every guard (unknown tool, schema, why, scopes, rate limit,
quotas, repaired-call policy, idempotency), the Kalygo record, and the journal: in memory ("off"), a SQLite
file in WAL mode or a local PostgreSQL server started for the run ("on": a rate-limit token, the idempotency
claim with the intent row before the tool, the result row after, each committed).
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
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

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


if __name__ == "__main__":
    per_call()
    concurrent()
