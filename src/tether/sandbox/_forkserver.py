"""A fork server: a small helper process that forks and execs bubblewrap on tether's behalf.

The pre-exec step (rlimits, the cgroup, as root the private mount namespace and the uid drop) needs a
fork, not vfork, and forking copies the parent's page tables: ~7 ms of tether's own CPU per run for a
200 MB agent process, ~18 ms for 1 GB, and growing. The server is a fresh interpreter that imports only
this package's launch code, so its fork costs the same whatever tether's size. Requests go over a Unix
socket pair with the child's stdio and extra fds attached (SCM_RIGHTS); the server answers with the pid and,
later, the exit status, which a reader thread in tether hands to whoever waits. The server is tether's child,
started on first use (and again after a fork of tether, or if it died); it exits when tether closes its end.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["Served", "spawn"]

enabled = True
"""Start sandboxes from the fork server (off: fork tether itself, as subprocess.Popen does)."""

_MAX_FDS = 32
_HIGH = 1000
"""Received fds are moved at or above this first, so moving them to their targets never overwrites one."""


@dataclass(frozen=True, slots=True)
class _Request:
    argv: Sequence[str]
    env: dict[str, str]
    cwd: str | None
    targets: Sequence[int]
    """Where each attached fd goes in the child: 0, 1, 2 for stdio, then the numbers they have in tether
    (the argv and the pre-exec step name them)."""
    close_after: Sequence[int]
    """Targets only the pre-exec step needs (cgroup, user namespace): closed before the exec."""
    child: Callable[[], Callable[[], None]] | None
    """Makes the pre-exec step (a pickled `functools.partial` of `_launch.preexec`); run after the fds are
    placed."""


class Served:
    """A process the fork server started: the part of `subprocess.Popen` the sandbox uses."""

    def __init__(
        self, pid: int, stdin: IO[bytes] | None, stdout: IO[bytes] | None, stderr: IO[bytes] | None
    ) -> None:
        self.pid = pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.returncode: int | None = None
        self._done = threading.Event()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)

    def _exited(self, status: int) -> None:
        self.returncode = os.waitstatus_to_exitcode(status)
        self._done.set()


class _Server:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.owner = os.getpid()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-c", "from tether.sandbox._forkserver import serve; serve()"],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                close_fds=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.sock = ours
        self._send = threading.Lock()
        self._started: dict[int, tuple[threading.Event, list[int]]] = {}
        self._running: dict[int, Served] = {}
        self._early: dict[int, int] = {}  # exits that arrived before their pid was registered
        self._ids = iter(range(1 << 62))
        self.alive = True
        self.served = False
        """Whether it ever started a program (one that never did is given up on)."""
        threading.Thread(target=self._read, name="tether-forkserver", daemon=True).start()

    def spawn(self, request: _Request, fds: Sequence[int], pipes: tuple[Any, Any, Any]) -> Served:
        number = next(self._ids)
        started = threading.Event()
        slot: list[int] = []
        self._started[number] = (started, slot)
        with self._send:
            socket.send_fds(self.sock, [pickle.dumps((number, request))], list(fds))
        if not started.wait(30) or not slot or slot[0] < 0:
            raise OSError(f"the fork server could not start {request.argv[0]}")
        served = Served(slot[0], *pipes)
        self.served = True
        with self._send:
            self._running[served.pid] = served
            if (status := self._early.pop(served.pid, None)) is not None:
                del self._running[served.pid]
                served._exited(status)  # pyright: ignore[reportPrivateUsage]  # the server's notice
        return served

    def _read(self) -> None:
        while True:
            try:
                message = self.sock.recv(4096)
            except OSError:
                message = b""
            if not message:
                break
            kind, key, value = pickle.loads(message)
            if kind == "started":
                event, slot = self._started.pop(key)
                slot.append(value)
                event.set()
            else:
                with self._send:
                    served = self._running.pop(key, None)
                    if served is None:
                        self._early[key] = value
                if served is not None:
                    served._exited(value)  # pyright: ignore[reportPrivateUsage]
        self.alive = False
        self.sock.close()
        self.proc.wait()
        for event, _ in list(self._started.values()):
            event.set()
        for served in list(self._running.values()):
            served._exited(9)  # pyright: ignore[reportPrivateUsage]  # the server died: treat as killed


_server: _Server | None = None
_lock = threading.Lock()


def spawn(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    stdin: int,
    stderr: int,
    pass_fds: Sequence[int],
    child_fds: Sequence[int] = (),
    child: Callable[[], Callable[[], None]] | None,
) -> Served:
    """Start `argv` from the fork server, like `subprocess.Popen` with stdout piped, `start_new_session` and
    `preexec_fn=child()` (`stdin`/`stderr`: `subprocess.PIPE` or `subprocess.DEVNULL`). `pass_fds` stay
    open in the program; `child_fds` only until the pre-exec step ran.

    Raises:
        OSError: the server could not be started or could not start the program.
    """
    global _server, enabled
    with _lock:
        if _server is None or not _server.alive or _server.owner != os.getpid():
            _server = _Server()
        server = _server
    theirs: list[int] = []
    ends: list[IO[bytes] | None] = []  # our ends of the pipes, each owning its fd
    try:
        for mode, reading in ((stdin, False), (subprocess.PIPE, True), (stderr, True)):
            if mode == subprocess.PIPE:
                read, write = os.pipe()
                theirs.append(write if reading else read)
                ends.append(open(read if reading else write, "rb" if reading else "wb", buffering=0))  # noqa: SIM115
            else:
                theirs.append(os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC))
                ends.append(None)
        request = _Request(list(argv), env, cwd, [0, 1, 2, *pass_fds, *child_fds], list(child_fds), child)
        served = server.spawn(request, [*theirs, *pass_fds, *child_fds], (ends[0], ends[1], ends[2]))
    except BaseException as exc:
        if isinstance(exc, OSError) and not server.served:  # a server that never started anything will not
            enabled = False
            server.proc.kill()
        for end in ends:
            if end is not None:
                end.close()
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    return served


# ---------------------------------------------------------------------------------- the server's side


def serve() -> None:
    """The server's loop: stdin is its socket to tether."""
    sock = socket.socket(fileno=os.dup(0))
    os.close(0)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, _ignore)
    with selectors.DefaultSelector() as sel:
        sel.register(sock, selectors.EVENT_READ)
        sel.register(wake_read, selectors.EVENT_READ)
        while True:
            for key, _ in sel.select():
                if key.fileobj is sock:
                    message, fds, _, _ = socket.recv_fds(sock, 1 << 20, _MAX_FDS)
                    if not message:
                        return
                    number, request = pickle.loads(message)
                    pid = _fork(request, fds)
                    for fd in fds:
                        os.close(fd)
                    sock.send(pickle.dumps(("started", number, pid)))
                else:
                    with contextlib.suppress(BlockingIOError):
                        os.read(wake_read, 4096)
                    _reap(sock)


def _ignore(signum: int, frame: object) -> None:
    """SIGCHLD's handler: the wakeup fd does the work (a handler must be set for it to be written)."""


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        sock.send(pickle.dumps(("exited", pid, status)))


def _fork(request: _Request, fds: Sequence[int]) -> int:
    try:
        pid = os.fork()
    except OSError:
        return -1
    if pid:
        return pid
    try:  # the child: never returns
        # Python ignores SIGPIPE and SIGXFSZ, and ignored signals stay ignored across exec (Popen's
        # restore_signals does the same)
        for signum in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(signum, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        os.setsid()
        high = [_dup_high(fd) for fd in fds]
        for fd, target in zip(high, request.targets, strict=True):
            os.dup2(fd, target, inheritable=True)
        keep = set(request.targets)
        for fd in range(3, max(keep) + 1):  # the server's own fds and the received copies
            if fd not in keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        os.closerange(max(keep) + 1, os.sysconf("SC_OPEN_MAX"))
        if request.cwd is not None:
            os.chdir(request.cwd)
        if request.child is not None:
            request.child()()
        for fd in request.close_after:
            os.close(fd)
        os.execvpe(request.argv[0], list(request.argv), request.env)
    except BaseException as exc:  # report on the child's stderr, then leave
        with contextlib.suppress(OSError):
            os.write(2, f"{request.argv[0]}: {exc}\n".encode())
    os._exit(1)


def _dup_high(fd: int) -> int:
    import fcntl  # only the server's children need it

    return fcntl.fcntl(fd, fcntl.F_DUPFD, _HIGH)
