"""A process that makes mutating calls and is SIGKILLed at one step of them, by test_crash.py.

Usage: python crash_child.py JOURNAL_URL MARKER_PATH STEP RECIPIENT[,RECIPIENT...]

One call of `transfer` per recipient, all at once (`execute_all`: their journal writes are grouped) when
there are several. STEP says where the process kills itself (SIGKILL: no cleanup, no flush):

- `claim`: as the transaction holding the intent of every call (with several calls: a group commit of two
  or more intents) is about to commit; tools that start before then block, so no result comes first;
- `tool`: never; the tool blocks for recipients named `bob*` (the test kills the process), others finish;
- `result`: as the transaction holding a result is about to commit;
- `returned`: once the result is committed, before the envelope is returned (in a recorder).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
from sqlalchemy import event

from tether.execution import CallReport, Executor, Run
from tether.store import SqlJournal
from tether.tools import Toolset, tool
from tether.types import ToolCall

state = {"marker": Path("marker")}
"""`marker`: where the tool notes each time it starts; set by `main` (in the child) or by the test."""
RELEASE = threading.Event()
"""Lets blocked tools finish; set in the child for the steps `result` and `returned`, and by tests that
run calls again."""
HOLD = {"all": False}
"""In the child at the step `claim`: every tool blocks (else only those for recipients named `bob*`)."""

CALL = ToolCall(id="call-1", name="transfer", arguments={"to": "bob", "cents": 500}, why="Pay Bob for lunch")
SESSION = "session-1"


def call(to: str) -> ToolCall:
    """The call for one recipient (`bob` is `CALL`)."""
    if to == "bob":
        return CALL
    return ToolCall(id=f"call-{to}", name="transfer", arguments={"to": to, "cents": 500}, why=f"Pay {to}")


@tool
def transfer(to: str, cents: int) -> str:
    """Moves money: mutating, so never repeated blindly."""
    with state["marker"].open("a") as f:
        f.write(f"ran {to}\n" if to != "bob" else "ran\n")
    if to.startswith("bob") or HOLD["all"]:
        RELEASE.wait()
    return f"sent {cents} to {to}"


TOOLS = Toolset(transfer)


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class Tripwire:
    """Watches the journal's statements and kills the process as the transaction named by `step` commits."""

    def __init__(self, step: str, calls: int):
        self.step, self.calls = step, calls
        self.inserted: list[str] = []
        self.in_transaction = False

    def statement(self, sql: str, kind: str | None) -> None:
        text = sql.strip().upper()
        if text.startswith("BEGIN"):
            self.inserted, self.in_transaction = [], True
        elif "INSERT INTO TETHER_JOURNAL" in text and kind is not None:  # an insert, or a CTE holding one
            self.inserted.append(kind)
            if not self.in_transaction:  # a statement on its own is its own transaction: about to commit
                self.commit()
        elif text == "COMMIT":
            self.commit()

    def commit(self) -> None:
        intents = self.inserted.count("intent")
        if self.step == "claim" and intents >= min(self.calls, 2):
            die()
        if self.step == "result" and "result" in self.inserted:
            die()
        self.inserted, self.in_transaction = [], False

    def watch(self, journal: SqlJournal) -> None:
        writer: Any = getattr(journal, "_writer", None)
        if writer is not None:  # SQLite: the writer's own connections
            for name in ("_connection", "_now"):
                connection = getattr(writer, name, None)
                raw = getattr(connection, "driver_connection", connection)
                if isinstance(raw, sqlite3.Connection):
                    raw.set_trace_callback(lambda sql: self.statement(sql, _sqlite_kind(sql)))
            return
        if getattr(journal, "_pg_writer", None) is not None:  # PostgreSQL: the writer's psycopg statements
            import psycopg

            execute: Any = psycopg.Connection.execute

            def statement(connection: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
                named: dict[str, Any] = params if isinstance(params, dict) else {}  # pyright: ignore[reportUnknownVariableType]
                kind = named.get("kind")
                self.statement(str(query), kind if isinstance(kind, str) else None)
                return execute(connection, query, params, **kwargs)

            psycopg.Connection.execute = statement  # pyright: ignore[reportAttributeAccessIssue]
            execute_async: Any = psycopg.AsyncConnection.execute  # the writes from the event loop

            async def statement_async(connection: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
                named: dict[str, Any] = params if isinstance(params, dict) else {}  # pyright: ignore[reportUnknownVariableType]
                kind = named.get("kind")
                self.statement(str(query), kind if isinstance(kind, str) else None)
                return await execute_async(connection, query, params, **kwargs)

            psycopg.AsyncConnection.execute = statement_async  # pyright: ignore[reportAttributeAccessIssue]
            return
        engine = journal.engine  # PostgreSQL through SQLAlchemy: its events

        def before(_c: Any, _cursor: Any, sql: str, parameters: Any, _context: Any, _many: bool) -> None:
            named: dict[str, Any] = parameters if isinstance(parameters, dict) else {}  # pyright: ignore[reportUnknownVariableType]
            kind = named.get("kind")
            self.statement(sql, kind if isinstance(kind, str) else None)

        def begin(_c: Any) -> None:
            self.statement("BEGIN", None)

        def commit(_c: Any) -> None:
            self.commit()

        event.listen(engine, "before_cursor_execute", before)
        event.listen(engine, "begin", begin)
        event.listen(engine, "commit", commit)


def _sqlite_kind(sql: str) -> str | None:
    for kind in ("intent", "result", "refusal", "resolution"):
        if f"VALUES ('{kind}'" in sql or f"SELECT '{kind}'" in sql:
            return kind
    return None


class DieOnReport:
    def record(self, report: CallReport) -> None:
        die()


async def main(url: str, marker: str, step: str, recipients: list[str]) -> None:
    state["marker"] = Path(marker)
    if step in ("result", "returned"):
        RELEASE.set()
    HOLD["all"] = step == "claim"
    journal = SqlJournal(url)
    pg_writer: Any = getattr(journal, "_pg_writer", None)
    if pg_writer is not None:  # the loop's connection made now, so a lone call's writes go from the loop
        async with pg_writer._connected(True):
            pass
    Tripwire(step, len(recipients)).watch(journal)
    recorders = [DieOnReport()] if step == "returned" else []
    executor = Executor(TOOLS, journal=journal, recorders=recorders)
    await executor.execute_all([call(to) for to in recipients], Run(session_id=SESSION))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(","))
