"""js.exec's engine: V8 (mini-racer, the `tether[js]` extra) in a pool of sandboxed worker processes.

V8 alone has no file system, network or process API, but in tether's own process two things escaped it:
typed arrays live outside the V8 heap (1 GiB held in tether), and a microtask loop (`for(;;){await 0}`)
kept a core spinning after its call was answered TIMEOUT. So V8 runs in workers (`_jsworker`), each in the
OS sandbox with its cgroup's memory limit; a call that passes its deadline kills its worker, whole, and
`TIMEOUT` means stopped. A fresh isolate per call keeps calls apart; workers make them ahead of time.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import resource
import selectors
import sys
import threading
import time
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from tether.exceptions import ToolError
from tether.sandbox import Sandbox, SandboxLimits, SandboxProcess, SandboxUnavailable
from tether.types import ErrorCode

__all__ = ["run_js"]

_HEAP_BYTES = 256 * 1024 * 1024
_START_S = 30.0
"""How long a new worker may take to start (Python, mini-racer and a first isolate, on a busy machine)."""
MAX_WORKERS = 8
"""Workers one pool runs at most, busy or idle: each holds a V8 heap, so a model fanning out more calls at
once than this gets them run as workers come free, within each call's own timeout."""


def run_js(code: str, input_json: Any, *, timeout_s: float, limits: SandboxLimits) -> dict[str, Any]:
    """Evaluate `code` with `input` bound in a pooled worker; returns {result, logs}."""
    request = {"code": code, "input": input_json, "room": limits.output_bytes // 2}
    pool = _pool(limits)
    deadline = time.monotonic() + timeout_s
    while True:
        worker = pool.take(deadline)
        try:
            answer = worker.ask(request, deadline - time.monotonic())
            break
        except TimeoutError:
            pool.discard(worker)
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"stopped after {timeout_s:g} s; its worker process was killed",
                suggestion="Make it faster or do less per call.",
            ) from None
        except EOFError:
            oom = worker.process.oom_killed()
            pool.discard(worker)
            if worker.served and not oom:
                continue  # it died idle (e.g. finishing off a previous call): ask a fresh one
            if oom:
                raise _out_of_memory(limits) from None
            raise ToolError(
                ErrorCode.INTERNAL, "the JavaScript worker died during the call", recoverable=False
            ) from None
    pool.give_back(worker)
    if (error := answer.get("error")) == "oom":
        raise _out_of_memory(limits)
    if error is not None and "allocation failed" in str(answer.get("message")):
        raise _out_of_memory(limits)  # a typed array the sandbox's memory could not hold
    if error is not None:
        raise ToolError(
            ErrorCode.INVALID_ARGS, f"JavaScript error: {answer.get('message')}", suggestion="Fix the script."
        )
    raw_logs = answer.get("logs")
    logs = [str(line) for line in raw_logs] if isinstance(raw_logs, list) else []  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]  # the worker's JSON
    value = answer.get("result")
    room = limits.output_bytes - sum(len(line) for line in logs)
    if isinstance(value, str) and len(value) > room:
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"the result is {len(value)} characters as JSON, over what is left of the "
            f"{limits.output_bytes}-character cap after the logs ({max(room, 0)})",
            suggestion="Return a summary (counts, a sample) rather than everything.",
        )
    return {"result": json.loads(value) if isinstance(value, str) else None, "logs": logs}


def _out_of_memory(limits: SandboxLimits) -> ToolError:
    return ToolError(
        ErrorCode.QUOTA_EXCEEDED,
        f"the script ran out of memory (V8 heap {_HEAP_BYTES // 2**20} MiB, "
        f"{limits.memory_bytes // 2**20} MiB in all)",
        suggestion="Use less memory.",
    )


class _Worker:
    def __init__(self, process: SandboxProcess) -> None:
        self.process = process
        stdin, stdout = process.proc.stdin, process.proc.stdout
        assert stdin is not None
        assert stdout is not None
        self._in = stdin.fileno()
        self._out = stdout.fileno()
        self._buffer = b""
        self.served = False
        """Whether it answered a call before (a fresh worker that dies is a real failure)."""

    def ask(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its answer. Raises TimeoutError past `timeout_s`, EOFError if the
        worker died."""
        data = (json.dumps(request) + "\n").encode()
        try:
            while data:
                data = data[os.write(self._in, data) :]
        except BrokenPipeError:
            raise EOFError from None
        return self.read_line(timeout_s)

    def read_line(self, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        with selectors.DefaultSelector() as sel:
            sel.register(self._out, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not sel.select(remaining):
                    raise TimeoutError
                chunk = os.read(self._out, 1 << 20)
                if not chunk:
                    raise EOFError
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            loaded = json.loads(line)
        except ValueError:
            raise EOFError from None  # not the worker speaking: treat it as gone
        return loaded if isinstance(loaded, dict) else {"error": "eval", "message": "bad answer"}  # pyright: ignore[reportUnknownVariableType]

    def close(self) -> None:
        self.process.close()


class _Pool:
    """Idle workers for one set of limits; a call takes one (or starts one) and gives it back."""

    def __init__(self, limits: SandboxLimits) -> None:
        # V8 reserves a terabyte of address space (its pointer cage) and uses a little of it: RLIMIT_AS cannot
        # apply; the cgroup bounds memory, and the worker's threads need more than a program's process budget
        self.limits = replace(
            limits, address_space_bytes=resource.RLIM_INFINITY, processes=max(limits.processes, 64)
        )
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_WORKERS)
        """One per worker a call holds: a worker is started only when none is idle, so at most this many live."""

    def take(self, deadline: float) -> _Worker:
        """An idle worker, or a new one; raises TIMEOUT if every worker stays busy until `deadline`."""
        if not self._slots.acquire(timeout=max(deadline - time.monotonic(), 0)):
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"all {MAX_WORKERS} JavaScript workers stayed busy with other calls until the deadline",
                suggestion="Run fewer js.exec calls at once.",
            )
        try:
            return self._idle_or_new()
        except BaseException:
            self._slots.release()
            raise

    def give_back(self, worker: _Worker) -> None:
        worker.served = True
        with self._lock:
            self._idle.append(worker)
        self._slots.release()

    def discard(self, worker: _Worker) -> None:
        """Kill a worker a call held (past its deadline, or dead) and free its slot."""
        worker.close()
        self._slots.release()

    def _idle_or_new(self) -> _Worker:
        while True:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            if worker is None:
                return self._start()
            if worker.process.proc.poll() is None:
                return worker
            worker.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()

    def _start(self) -> _Worker:
        package = _engine_dir()
        python = os.path.realpath(sys.executable)
        box = Sandbox(None, limits=self.limits, ro_binds=_binds(python, package))
        argv = [python, "-I", "-c", _worker_source(), str(package), str(_HEAP_BYTES)]
        try:
            worker = _Worker(box.start(argv))
        except SandboxUnavailable as exc:
            raise ToolError(
                "SANDBOX_UNAVAILABLE",
                f"JavaScript cannot run sandboxed here: {exc}",
                recoverable=False,
                suggestion="Tell the user: install bubblewrap (apt-get install bubblewrap) to run code safely.",
            ) from None
        try:
            worker.read_line(_START_S)  # {"ready": true}
        except (TimeoutError, EOFError):
            worker.close()
            raise ToolError(
                ErrorCode.INTERNAL, "the JavaScript worker did not start", recoverable=False
            ) from None
        return worker


_pools: dict[SandboxLimits, _Pool] = {}
_pools_lock = threading.Lock()


def _pool(limits: SandboxLimits) -> _Pool:
    with _pools_lock:
        pool = _pools.get(limits)
        if pool is None:
            if not _pools:
                atexit.register(_close_all)
            pool = _pools[limits] = _Pool(limits)
        return pool


def _close_all() -> None:
    for pool in list(_pools.values()):
        pool.close()


@cache
def _engine_dir() -> Path:
    """The directory holding the `py_mini_racer` package (the optional extra)."""
    try:
        import py_mini_racer  # optional extra, found on use
    except ImportError:
        raise ToolError(
            "JS_UNAVAILABLE",
            "the JavaScript engine is not installed",
            recoverable=False,
            suggestion="Tell the user: pip install 'tether[js]' to enable js.exec.",
        ) from None
    return Path(py_mini_racer.__file__).resolve().parent.parent


def _binds(python: str, package: Path) -> list[str]:
    """What the worker needs beyond /usr: the interpreter's prefix and the engine's package."""
    prefix = Path(python).parent.parent
    binds = [] if str(prefix).startswith("/usr") else [str(prefix)]
    with contextlib.suppress(ValueError):
        package.relative_to(prefix)
        return binds
    return [*binds, str(package / "py_mini_racer")]


@cache
def _worker_source() -> str:
    return Path(__file__).with_name("_jsworker.py").read_text()
