"""js.exec's workers: sandboxed processes that each evaluate one script at a time (`_jsworker`), pooled.

A call takes an idle worker (or starts one, in a thread), sends one frame and waits for one frame on the event
loop, and gives the worker back. Anything else ends the worker, whole: a deadline passed, the call cancelled,
or an answer tether cannot trust. The worker is treated as hostile (a script that broke the engine speaks
through it): a frame longer than the call's bound, a frame that is not a JSON object, bytes sent unasked
(seen when it is next taken), or silence past the deadline each end it; tether never reads more than the
bound, nor waits past the deadline.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import json
import os
import secrets
import select
import shutil
import sys
import tempfile
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

from tether._threads import run_in_worker
from tether.exceptions import ToolError
from tether.sandbox import Sandbox, SandboxLimits, SandboxProcess, SandboxUnavailable
from tether.types import ErrorCode

__all__ = ["MAX_WORKERS", "WORKER_UID", "BadFrame", "Worker", "memory_bytes", "pool"]

WORKER_UID = 65533
"""The uid the workers run as, inside and (when tether is root) on the host: not the 65534 of sandboxed
runs, so a worker a script broke into and a run's processes never share a host uid (no signals, ptrace or
/proc access between them should a namespace fail, and without a cgroup no shared RLIMIT_NPROC budget).
As an ordinary user every sandbox is that user's on the host; their namespaces keep them apart."""

MAX_WORKERS = 8
"""Workers one pool runs at most, busy or idle: a model fanning out more calls at once than this gets them
run as workers come free, within each call's own timeout."""
_START_S = 30.0
"""How long a new worker may take to start (bubblewrap, Python and the engine, on a busy machine)."""
_WAIT_S = 0.002
"""How often a call that found every worker busy looks again (a rare path; works across event loops)."""
_READY = (14).to_bytes(4, "big") + b'{"ready":true}'
"""The worker's first frame, once it can serve."""
_NONCE = 8
"""Bytes of the random nonce that opens every request and its answer (the worker echoes it)."""


class Unasked(Exception):
    """The worker answered with another request's nonce: bytes it sent when nobody asked."""


class BadFrame(Exception):
    """The worker said something no honest worker says."""


def memory_bytes(limits: SandboxLimits) -> int:
    """The engine's own memory limit: half the sandbox's (and of RLIMIT_AS), at most 256 MiB (the rest:
    Python and the answer)."""
    return min(256 * 1024 * 1024, limits.memory_bytes // 2, limits.address_space_bytes // 2)


class Worker:
    """One worker process; used by one call at a time."""

    def __init__(self, process: SandboxProcess) -> None:
        self.process = process
        stdin, stdout = process.proc.stdin, process.proc.stdout
        assert stdin is not None
        assert stdout is not None
        self._in = stdin.fileno()
        self._out = stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self.served = False
        """Whether it answered a call before (a fresh worker that dies is a real failure)."""

    def quiet(self) -> bool:
        """Whether it has said nothing since its last answer: a worker that exited (it retires before its
        CPU limit) or speaks unasked is not used again."""
        return not _readable(self._out, 0)

    async def ask(self, request: bytes, deadline: float, max_bytes: int) -> tuple[dict[str, Any], int]:
        """Send one request frame and read its answer (and its length in bytes). Raises TimeoutError at
        `deadline` (loop time), EOFError if the worker died, Unasked for an answer carrying another request's
        nonce (bytes it sent unasked, e.g. after an earlier answer), BadFrame for one it cannot have meant."""
        loop = asyncio.get_running_loop()
        nonce = secrets.token_bytes(_NONCE)  # unguessable: no frame written before this request can carry it
        async with asyncio.timeout_at(deadline):
            data = (len(request) + _NONCE).to_bytes(4, "big") + nonce + request
            while data:
                try:
                    data = data[os.write(self._in, data) :]
                except BlockingIOError:
                    await _ready(loop, self._in, writing=True)
                except (BrokenPipeError, ConnectionResetError):
                    raise EOFError from None
            await _ready(loop, self._out, writing=False)
            size = int.from_bytes(await self._read(loop, 4), "big")
            if size > max_bytes + _NONCE:
                raise BadFrame(f"a {size}-byte answer, over its bound of {max_bytes}")
            if size < _NONCE:
                raise BadFrame(f"a {size}-byte answer, too short to name its request")
            body = await self._read(loop, size)  # exactly: bytes of a later, unasked frame stay unread
        if not secrets.compare_digest(body[:_NONCE], nonce):
            raise Unasked
        return _parsed(body[_NONCE:]), size - _NONCE

    def read_ready(self, timeout_s: float) -> None:
        """Block until the worker's first frame (`{"ready": true}`), in the starting thread."""
        deadline = time.monotonic() + timeout_s
        data = b""
        while len(data) < len(_READY):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not _readable(self._out, remaining):
                raise TimeoutError
            chunk = os.read(self._out, len(_READY) - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        if data != _READY:
            raise BadFrame("something else than ready")

    async def _read(self, loop: asyncio.AbstractEventLoop, size: int) -> bytes:
        data = b""
        while len(data) < size:
            try:
                chunk = os.read(self._out, min(size - len(data), 1 << 20))
            except BlockingIOError:
                await _ready(loop, self._out, writing=False)
                continue
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def close(self) -> None:
        self.process.close()


def _readable(fd: int, timeout_s: float) -> bool:
    """Whether `fd` has bytes (or its end) within `timeout_s`; poll, as select cannot see fds past 1023."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(timeout_s * 1000))


async def _ready(loop: asyncio.AbstractEventLoop, fd: int, *, writing: bool) -> None:
    """Wait on the event loop until `fd` can be written (or read)."""
    waiter: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not waiter.done():
            waiter.set_result(None)

    (loop.add_writer if writing else loop.add_reader)(fd, wake)
    try:
        await waiter
    finally:
        (loop.remove_writer if writing else loop.remove_reader)(fd)


def _parsed(body: bytes) -> dict[str, Any]:
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):
        raise BadFrame("an answer that is not JSON") from None
    if not isinstance(answer, dict):
        raise BadFrame("an answer that is not a JSON object")
    return answer  # pyright: ignore[reportUnknownVariableType]  # checked field by field by the caller


class _Pool:
    """Idle workers for one set of limits; a call takes one (or starts one) and gives it back or ends it."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits
        self._idle: list[Worker] = []
        self._live = 0
        """Workers idle, busy or starting: at most `MAX_WORKERS`."""
        self._closes = 0
        """How many times the pool was closed: a spare started before a close is not kept after it."""
        self._lock = threading.Lock()

    async def take(self, deadline: float) -> Worker:
        """An idle worker, or a new one; raises TIMEOUT if every worker stays busy until `deadline`."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
                start = worker is None and self._live < MAX_WORKERS
                if start:
                    self._live += 1
            if worker is not None:
                if worker.quiet():
                    return worker
                self.discard(worker)  # it exited (retired) or spoke unasked
            elif start:
                # in a thread (bubblewrap and Python take tens of ms); the new worker goes to the idle list,
                # so one whose caller was cancelled meanwhile serves the next call
                await run_in_worker(self._start)
            elif loop.time() >= deadline:
                raise ToolError(
                    ErrorCode.TIMEOUT,
                    f"all {MAX_WORKERS} JavaScript workers stayed busy with other calls until the deadline",
                    suggestion="Run fewer js.exec calls at once.",
                )
            else:
                await asyncio.sleep(min(_WAIT_S, max(deadline - loop.time(), 0)))

    def give_back(self, worker: Worker) -> None:
        worker.served = True
        with self._lock:
            self._idle.append(worker)

    def discard(self, worker: Worker) -> None:
        """End a worker (past its deadline, cancelled, dead or untrusted) and free its place.

        When the worker had served before (the pool is in use) and no other is idle, a spare starts in the
        background, so the call after a timeout or a cancel does not wait for a cold start."""
        worker.close()
        with self._lock:
            self._live -= 1
            spare = worker.served and not self._idle and self._live < MAX_WORKERS
            if spare:
                self._live += 1
            closes = self._closes
        if spare:
            threading.Thread(
                target=self._start_spare, args=(closes,), name="tether-js-spare", daemon=True
            ).start()

    def close(self) -> None:
        with self._lock:
            self._closes += 1
            idle, self._idle = self._idle, []
            self._live -= len(idle)
        for worker in idle:
            worker.close()

    def _start_spare(self, closes: int) -> None:
        try:
            self._start(closes)
        except Exception:  # best effort: the next call starts a worker itself, and says why if it cannot
            return

    def _start(self, closes: int | None = None) -> None:
        """Start a worker into the idle list (for a spare, only if the pool was not closed since `closes`)."""
        try:
            worker = _started(self.limits)
        except BaseException:
            with self._lock:
                self._live -= 1
            raise
        with self._lock:
            kept = closes is None or closes == self._closes
            if kept:
                self._idle.append(worker)
            else:
                self._live -= 1
        if not kept:
            worker.close()


def _started(limits: SandboxLimits) -> Worker:
    engine_dir = _engine_dir()
    python = os.path.realpath(sys.executable)
    # QuickJS reserves no address space ahead: RLIMIT_AS bounds the worker where no cgroup can be made
    box = Sandbox(None, limits=limits, ro_binds=_binds(python, engine_dir), uid=WORKER_UID)
    retire_s = limits.cpu_seconds / 2  # well before RLIMIT_CPU's SIGXCPU
    argv = [
        python,
        "-I",
        "-S",
        "-c",
        _worker_source(),
        str(engine_dir),
        str(memory_bytes(limits)),
        str(retire_s),
    ]
    try:
        worker = Worker(box.start(argv))
    except SandboxUnavailable as exc:
        raise ToolError(
            "SANDBOX_UNAVAILABLE",
            f"JavaScript cannot run sandboxed here: {exc}",
            recoverable=False,
            suggestion="Tell the user: install bubblewrap (apt-get install bubblewrap) to run code safely.",
        ) from None
    try:
        worker.read_ready(_START_S)
    except (TimeoutError, EOFError, BadFrame):
        worker.close()
        raise ToolError(
            ErrorCode.INTERNAL, "the JavaScript worker did not start", recoverable=False
        ) from None
    return worker


_pools: dict[SandboxLimits, _Pool] = {}
_pools_lock = threading.Lock()


def pool(limits: SandboxLimits) -> _Pool:
    """The pool of workers for `limits` (one per set of limits, for the process's life)."""
    with _pools_lock:
        found = _pools.get(limits)
        if found is None:
            if not _pools:
                atexit.register(_close_all)
            found = _pools[limits] = _Pool(limits)
        return found


def _close_all() -> None:
    for each in list(_pools.values()):
        each.close()


@cache
def _engine_dir() -> Path:
    """A private directory holding only the `_quickjs` extension module (the `tether[js]` extra), which the
    worker gets read-only: not the whole site-packages it was installed in. Found without importing it here."""
    spec = importlib.util.find_spec("_quickjs")
    if spec is None or spec.origin is None:
        raise ToolError(
            "JS_UNAVAILABLE",
            "the JavaScript engine is not installed",
            recoverable=False,
            suggestion="Tell the user: pip install 'tether[js]' to enable js.exec.",
        )
    engine = Path(spec.origin).resolve()
    directory = Path(tempfile.mkdtemp(prefix="tether-quickjs-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    directory.chmod(0o755)  # the sandbox's uid reads it
    try:
        os.link(engine, directory / engine.name)  # no copy where both live on one filesystem
    except OSError:
        shutil.copyfile(engine, directory / engine.name)
    return directory


def _binds(python: str, engine_dir: Path) -> list[str]:
    """What the worker needs beyond /usr: the interpreter's prefix and the engine's directory."""
    prefix = Path(python).parent.parent
    return [str(engine_dir)] if str(prefix).startswith("/usr") else [str(prefix), str(engine_dir)]


@cache
def _worker_source() -> str:
    return Path(__file__).with_name("_jsworker.py").read_text()
