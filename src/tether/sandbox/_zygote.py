"""Zygotes: one bubblewrap sandbox per sandbox configuration that keeps spare, already isolated children.

Starting bubblewrap costs ~20 ms a run (namespaces, a dozen mounts, a fresh root); a run from a zygote
costs what a fork and an exec cost. A zygote is bubblewrap running `_inside.py` as uid 0 of its user
namespace; it makes each spare ahead of time (own mount, pid, ipc and network namespaces, fresh capped
`/tmp` and `/dev/shm`, the workspace as configured, a nested user namespace as uid 65534 with no
capabilities and none to gain) and hands tether the spare's socket. Per run, tether takes a spare, moves it
into the run's cgroup, and sends argv, environment, working directory, rlimits and the stdio fds; the spare
loads the seccomp filter in the child it execs, and when that child ends it exits, and the kernel kills all
the run left behind. Nothing carries over between runs: each has its own namespaces and file systems.

At most `MAX_ZYGOTES` live at once (least recently used goes first, never one with runs in flight). Where a
zygote cannot be made (no `python3` under `/usr`, a kernel that refuses the nested mounts), runs fall back
to one bubblewrap each, and `status()` says why.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import select
import socket
import struct
import subprocess
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import IO, Protocol

from ._cgroup import Cgroup
from ._cgroup import release as release_group

__all__ = ["MAX_ZYGOTES", "Spare", "Zygote", "ZygoteRun", "ZygoteUnavailable", "status"]

enabled = True
"""Start runs from zygotes (off: one bubblewrap per run)."""

MAX_ZYGOTES = 8
SPARES = 2
"""Spares each zygote keeps ready (made again as soon as one is taken)."""

_START_TIMEOUT_S = 20.0
_UCRED = struct.Struct("iII")


class ZygoteUnavailable(RuntimeError):
    """A zygote could not be made or stopped answering: run with one bubblewrap instead."""


class _Running(Protocol):
    """What a zygote needs of the sandbox process that runs it (a `SandboxProcess`)."""

    def kill(self) -> None: ...
    def close(self) -> None: ...
    def poll(self) -> int | None: ...


@cache
def inside_source() -> str:
    return Path(__file__).with_name("_inside.py").read_text()


class Spare:
    """One spare: its socket, its host pid, and (overlay workspaces) an fd of its upper layer."""

    def __init__(self, sock: socket.socket, pid: int, upper: int | None) -> None:
        self.sock, self.pid, self.upper = sock, pid, upper
        self.group: Cgroup | None = None
        """The run's cgroup, the spare already in it."""
        self._pidfd: int | None = os.pidfd_open(pid)

    def gone(self, timeout: float) -> bool:
        """Wait until the spare, and so every process of its run, has exited (its pid namespace is empty)."""
        return self._pidfd is not None and bool(select.select([self._pidfd], [], [], timeout)[0])

    def close(self) -> None:
        """Let it go (a spare that loses its socket before its run exits): it exits, and its cgroup is
        pooled again once empty."""
        self.sock.close()
        if self.group is not None:
            release_group(self.group, wait=False)
            self.group = None
        for fd in (self.upper, self._pidfd):
            if fd is not None:
                os.close(fd)
        self.upper = self._pidfd = None


class ZygoteRun:
    """A run in a spare: the part of `subprocess.Popen` the sandbox uses (pid: the spare's, on the host)."""

    def __init__(
        self, spare: Spare, stdin: IO[bytes] | None, stdout: IO[bytes] | None, stderr: IO[bytes] | None
    ) -> None:
        self.pid = spare.pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.returncode: int | None = None
        self.started = False
        """The spare took the run (a spare that died before it did ran nothing: the run can be retried)."""
        self.reported = False
        """The spare reported the end: then every process of the run is gone (it killed and reaped them)."""
        self.spare = spare
        self._sock = spare.sock

    def poll(self) -> int | None:
        while self.returncode is None and select.select([self._sock], [], [], 0)[0]:
            self._read()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        while self.returncode is None:
            if not select.select([self._sock], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            self._read()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, 9)

    def close(self) -> None:
        self.spare.close()

    def _read(self) -> None:
        """One message: the spare took the run, or how it ended; or EOF (it was killed)."""
        try:
            message = self._sock.recv(4096)
            answer: object = json.loads(message) if message else None
            if answer == {"started": True}:
                self.started = True
                return
            status = int(answer["status"]) if isinstance(answer, dict) else None  # pyright: ignore[reportUnknownArgumentType]
        except (OSError, ValueError, KeyError, TypeError):
            status = None
        # no report: the spare was killed (a timeout, a flood, its zygote gone)
        self.returncode = -9 if status is None else os.waitstatus_to_exitcode(status)
        self.reported = status is not None


class Zygote:
    """One zygote: a bubblewrap sandbox running `_inside.py`, its control socket, and a thread that receives
    its spares as they are made and places each in a cgroup (`place`) ahead of its run: moving a process
    into a v1 memory cgroup waits for an RCU grace period, milliseconds that no run should wait for."""

    def __init__(
        self,
        start: Callable[[Sequence[str], int], _Running],
        config: Mapping[str, object],
        place: Callable[[Spare], Cgroup | None],
    ) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            settings = json.dumps({**config, "spares": SPARES, "ctl": theirs.fileno()})
            argv = ["python3", "-I", "-c", inside_source(), settings]
            self.process = start(argv, theirs.fileno())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.ctl = ours
        self.busy = 0
        self.served = False
        """Whether it ever handed out a spare (one that never did is not tried again for its key)."""
        self._place = place
        self._ready: queue.Queue[Spare | ZygoteUnavailable] = queue.Queue()
        self._closed = False
        self._closing = threading.Lock()
        threading.Thread(target=self._receive, name="tether-zygote", daemon=True).start()

    def take(self) -> Spare:
        """The next spare, placed and ready to run (another is made when its run ends: `replenish`).

        Raises:
            ZygoteUnavailable: the zygote died or did not answer in time.
        """
        try:
            got = self._ready.get(timeout=_START_TIMEOUT_S)
        except queue.Empty:
            raise ZygoteUnavailable("the zygote made no spare in time") from None
        if isinstance(got, ZygoteUnavailable):
            self._ready.put(got)  # for whoever asks next
            raise got
        if select.select([got.sock], [], [], 0)[0]:  # EOF: it died while it waited (its zygote was killed)
            got.close()
            raise ZygoteUnavailable("a spare died while it waited")
        if self.process.poll() is not None:  # bubblewrap exited (killed): its namespace, and this spare with
            got.close()  # it, die a moment later, so a run started in it would only be killed (exit 137)
            raise ZygoteUnavailable("the zygote exited")
        self.served = True
        return got

    def replenish(self) -> None:
        """Ask for a spare in place of one taken: after its run, so that making it (namespaces, mounts)
        does not compete with the run for the cores."""
        with contextlib.suppress(OSError):  # a zygote that is gone fails its next take
            self.ctl.send(b"+")

    def close(self) -> None:
        with self._closing:
            self._closed = True
        self.ctl.close()
        self.process.close()
        while True:
            try:
                got = self._ready.get_nowait()
            except queue.Empty:
                return
            if isinstance(got, Spare):
                got.close()

    def _receive(self) -> None:
        """The thread: each spare's socket, ready message and cgroup, then into the queue."""
        while True:
            try:
                _, fds, _, _ = socket.recv_fds(self.ctl, 16, 1)
            except OSError:
                fds = []
            if len(fds) != 1:
                self._ready.put(ZygoteUnavailable("the zygote is gone"))
                return
            sock = socket.socket(fileno=fds[0])
            try:
                spare = _ready(sock)
            except (OSError, ZygoteUnavailable) as exc:
                sock.close()
                self._ready.put(exc if isinstance(exc, ZygoteUnavailable) else ZygoteUnavailable(str(exc)))
                return
            try:
                spare.group = self._place(spare)
            except OSError as exc:
                spare.close()
                self._ready.put(ZygoteUnavailable(f"a spare could not join its cgroup: {exc}"))
                return
            with self._closing:  # a spare put after close() drained the queue would never be closed
                if not self._closed:
                    self._ready.put(spare)
                    continue
            spare.close()
            return


def _ready(sock: socket.socket) -> Spare:
    """Read a spare's first message: ready (with its credentials, and maybe an fd), or why it failed."""
    if not select.select([sock], [], [], _START_TIMEOUT_S)[0]:
        raise ZygoteUnavailable("a spare did not get ready in time")
    message, ancillary, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(_UCRED.size) + socket.CMSG_SPACE(4))
    pid, fds = 0, list[int]()
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = _UCRED.unpack(data[: _UCRED.size])[0]
        elif level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += struct.unpack(f"{len(data) // 4}i", data[: len(data) // 4 * 4])
    try:
        answer: object = json.loads(message) if message else {"error": "the spare died"}
    except ValueError:
        answer = {"error": "the spare answered garbage"}
    if answer != {"ready": True} or pid <= 0:
        for fd in fds:
            os.close(fd)
        reason = str(answer.get("error")) if isinstance(answer, dict) else "?"  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        raise ZygoteUnavailable(f"the zygote could not make a spare: {reason}")
    for fd in fds[1:]:
        os.close(fd)
    try:
        return Spare(sock, pid, fds[0] if fds else None)
    except OSError as exc:  # pidfd_open: it died already
        for fd in fds[:1]:
            os.close(fd)
        raise ZygoteUnavailable(f"a spare died while it waited: {exc}") from exc


_zygotes: OrderedDict[Hashable, Zygote] = OrderedDict()
_broken: dict[Hashable, str] = {}
_lock = threading.Lock()
_owner = os.getpid()
_last_failure: list[str] = []
_exit_registered: list[bool] = []


def acquire(key: Hashable, make: Callable[[], Zygote]) -> tuple[Zygote, Spare] | None:
    """A spare of the zygote for `key` (made with `make()` if there is none), or `None` where zygotes
    cannot be used; the caller runs in the spare and then calls `release(zygote)`."""
    global _owner
    if not enabled:
        return None
    with _lock:
        if _owner != os.getpid():  # a forked tether: its parent's zygotes are not its own
            _zygotes.clear()
            _owner = os.getpid()
        if key in _broken:
            return None
        zygote = _zygotes.get(key)
        if zygote is not None:
            _zygotes.move_to_end(key)
            zygote.busy += 1
    if zygote is None:
        try:
            zygote = make()
        except (OSError, ZygoteUnavailable) as exc:
            _failed(key, str(exc))
            return None
        with _lock:
            if not _exit_registered:
                atexit.register(reset)
                _exit_registered.append(True)
            made, other = zygote, _zygotes.get(key)
            if other is not None:  # another thread made one meanwhile: use it, close ours
                zygote = other
            else:
                _zygotes[key] = zygote
            zygote.busy += 1
            _evict()
        if made is not zygote:
            made.close()
    try:
        return zygote, zygote.take()
    except (OSError, ZygoteUnavailable) as exc:
        release(zygote, took=False)
        with _lock:
            if _zygotes.get(key) is zygote:
                del _zygotes[key]
        zygote.close()
        if not zygote.served:  # a zygote that never worked: this configuration runs with bwrap
            _failed(key, str(exc))
            return None
        return acquire(key, make)  # one that died (killed, evicted): a new one


def release(zygote: Zygote, *, took: bool = True) -> None:
    """A run of `zygote` ended (`took`: it used a spare, so another is made now)."""
    if took:
        zygote.replenish()
    with _lock:
        zygote.busy -= 1
        _evict()


def _evict() -> None:
    """Close the least recently used idle zygotes past the cap (under `_lock`)."""
    while len(_zygotes) > MAX_ZYGOTES:
        idle = next((k for k, z in _zygotes.items() if z.busy == 0), None)
        if idle is None:
            return
        _zygotes.pop(idle).close()


def _failed(key: Hashable, reason: str) -> None:
    with _lock:
        _broken[key] = reason
        _last_failure[:] = [reason]


def status() -> tuple[bool, str]:
    """Whether runs start from zygotes here, and a line for people."""
    if not enabled:
        return False, "zygotes are turned off: one bubblewrap per run"
    if _last_failure:
        return False, f"no zygote ({_last_failure[0]}): one bubblewrap per run"
    return (
        True,
        f"zygotes (up to {MAX_ZYGOTES}, {SPARES} spares each): a run is a spawn in a spare made ahead",
    )


def live() -> int:
    """How many zygotes are alive."""
    with _lock:
        return len(_zygotes)


def reset() -> None:
    """Close every zygote and forget failures (tests, and `tether sandbox check`)."""
    with _lock:
        zygotes = list(_zygotes.values())
        _zygotes.clear()
        _broken.clear()
        _last_failure.clear()
    for zygote in zygotes:
        zygote.close()
