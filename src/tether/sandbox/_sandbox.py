"""`Sandbox`: run a command under bubblewrap: namespaces, no capabilities, seccomp, rlimits, a timeout."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import IO, cast

from tether.exceptions import SandboxUnavailable

from . import _forkserver as forkserver
from . import _zygote
from ._bwrap import WORKSPACE, BwrapPlan, find_bwrap, probe
from ._capture import Captured, capture
from ._cgroup import Cgroup, acquire, release
from ._cleanup import remove_tree
from ._copyback import copy_back, over_quota
from ._forkserver import Served
from ._idmap import supported, userns_fd
from ._launch import STAGE, Overlay, overlay_support, preexec, rlimits
from ._limits import SandboxLimits, SandboxResult, command_bytes
from ._seccomp import UnsupportedArchitecture, sandbox_filter
from ._zygote import Spare, Zygote, ZygoteRun

__all__ = ["DEFAULT_UID", "Sandbox", "SandboxProcess"]

DEFAULT_UID = 65534
"""`nobody`: the uid sandboxed programs run as, inside the sandbox and (when tether is root) outside."""

_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": WORKSPACE, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}


class Sandbox:
    """An OS sandbox around one workspace directory (bubblewrap).

    Inside, a command sees a read-only minimal root (`/usr`, a few files of `/etc`), a private `/tmp` tmpfs,
    `/proc` of its own pid namespace and the workspace, writable, at `/workspace`. It runs in new user, pid,
    network, ipc, uts and cgroup namespaces as an unprivileged uid with every capability dropped, so it cannot
    remount anything; with the network off a seccomp filter refuses non-Unix sockets. Resource limits apply to
    each process and, where a cgroup can be made (see `cgroup_support`), to the whole tree; a timeout kills the
    whole tree: the sandbox's init dies, and the kernel kills everything left in its pid namespace, including
    children that called `setsid`.

    When tether runs as root, bubblewrap itself is started as `uid` too. A sandbox whose host uid is 0 would
    be exempt from RLIMIT_NPROC (the kernel never counts root's processes) and could read any root-owned file
    bound into it. The workspace is then mounted idmapped (its owner appears as `uid` inside, files keep their
    owner on the host); where the filesystem cannot do that, it is handed over to `uid` (chown) instead.

    Args:
        workspace: the host directory mounted at `/workspace`; created if missing. `None`: a private tmpfs of
            `SandboxLimits.workspace_bytes` instead, which nothing on the host ever reads and which dies with the run
            (unsandboxed: a temporary directory, removed after the run).
        network: share the host's network (off by default; then sockets other than AF_UNIX are refused).
        limits: resource limits.
        ro_binds: further host paths to mount read-only at the same place inside (e.g. a Python prefix).
        uid: the unprivileged uid to run as.
        unsandboxed: opt out of the sandbox and run commands directly (rlimits and timeout only). Only for
            hosts without bubblewrap where the caller accepts running model-written code on the host.
        idmap: as root, idmap the workspace rather than chown it (when the kernel and filesystem allow).
        read_only: mount the workspace read-only (a helper that only reads it); as root it is never handed
            over then, so without idmapping the sandbox reads only what any user may.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None,
        *,
        network: bool = False,
        limits: SandboxLimits | None = None,
        ro_binds: Sequence[str | os.PathLike[str]] = (),
        uid: int = DEFAULT_UID,
        unsandboxed: bool = False,
        idmap: bool = True,
        read_only: bool = False,
    ) -> None:
        self.workspace = None if workspace is None else Path(workspace).resolve()
        self.network = network
        self.limits = limits or SandboxLimits()
        self.ro_binds = tuple(Path(p).resolve() for p in ro_binds)
        self.uid = uid
        self.unsandboxed = unsandboxed
        self.idmap = idmap
        self.read_only = read_only
        self._run_as = uid if os.geteuid() == 0 and uid != 0 else None

    def check(self) -> None:
        """Make sure sandboxed runs can start here.

        Raises:
            SandboxUnavailable: bubblewrap is missing or cannot create namespaces (never when unsandboxed).
        """
        if self.unsandboxed:
            return
        bwrap = find_bwrap()
        if bwrap is None:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed, so code cannot run sandboxed; install it "
                "(Debian/Ubuntu: apt-get install bubblewrap) or opt out explicitly with unsandboxed=True."
            )
        probe(bwrap, self.uid, self._run_as)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: str = ".",
        timeout_s: float | None = None,
        stdin: bytes | str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> SandboxResult:
        """Run `argv` in the sandbox and return its capped output.

        Args:
            argv: the program and its arguments (no shell).
            cwd: working directory, relative to the workspace (or absolute inside the sandbox).
            timeout_s: wall-clock limit; `SandboxLimits.timeout_s` when omitted.
            stdin: data fed to the program's standard input.
            env: extra environment variables (the base is a minimal PATH, HOME, TMPDIR, LANG).

        Raises:
            SandboxUnavailable: see `check`.
        """
        data = stdin.encode() if isinstance(stdin, str) else stdin
        timeout = self.limits.timeout_s if timeout_s is None else timeout_s
        started = time.monotonic()
        got, code, oom, over, lost = self._attempt(argv, cwd, env, data, started + timeout)
        if lost and not (got.timed_out or got.truncated):
            # the spare died before it took the run (its zygote was killed): nothing ran, so run it again
            got, code, oom, over, _ = self._attempt(argv, cwd, env, data, started + timeout)
        stopped = got.timed_out or got.truncated
        return SandboxResult(
            stdout=got.stdout.decode(errors="replace"),
            stderr=got.stderr.decode(errors="replace"),
            exit_code=-9 if stopped else code if code >= 0 else 128 - code,
            duration_ms=round((time.monotonic() - started) * 1000),
            timed_out=got.timed_out,
            truncated=got.truncated,
            sandboxed=not self.unsandboxed,
            oom_killed=oom,
            quota_exceeded=over,
        )

    def _attempt(
        self,
        argv: Sequence[str],
        cwd: str,
        env: Mapping[str, str] | None,
        data: bytes | None,
        deadline: float,
    ) -> tuple[Captured, int, bool, str | None, bool]:
        """One start of `argv`: its capture, exit code, OOM kill, quota verdict, and whether it was lost
        (a spare that died before it took the run)."""
        with self._launch(
            argv, cwd, env, stdin=subprocess.PIPE if data else subprocess.DEVNULL, zygote=True
        ) as running:
            got = capture(running.proc, data, deadline=deadline, cap=self.limits.output_bytes)
            if got.timed_out or got.truncated:
                running.kill()
            code = running.proc.wait()
            oom = running.oom_killed()
            over = None
            if isinstance(running.proc, ZygoteRun):
                over = self._copy_back(running.proc)
            elif running.quota is not None:
                over = self._copy_back_plain(running)
        lost = isinstance(running.proc, ZygoteRun) and not running.proc.started
        return got, code, oom, over, lost

    def start(
        self, argv: Sequence[str], *, cwd: str = ".", env: Mapping[str, str] | None = None
    ) -> SandboxProcess:
        """Start `argv` in the sandbox and leave it running, its stdin and stdout piped to the caller (for a
        long-lived worker that serves requests). Its stderr is discarded. The caller must `close()` it.

        Raises:
            SandboxUnavailable: see `check`.
        """
        with self._launch(argv, cwd, env, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL) as running:
            return running.detach()

    @contextlib.contextmanager
    def _launch(
        self,
        argv: Sequence[str],
        cwd: str,
        env: Mapping[str, str] | None,
        *,
        stdin: int,
        stderr: int = subprocess.PIPE,
        zygote: bool = False,
        zygote_ctl: int | None = None,
    ) -> Iterator[SandboxProcess]:
        """Start `argv` (sandboxed or not) in its cgroup; closes it on the way out unless detached.

        `zygote`: from a spare of this configuration's zygote where one can be had. `zygote_ctl`: start the
        zygote itself (bubblewrap running `_inside.py` with this control socket; no cgroup, no rlimits)."""
        if not argv:
            raise ValueError("argv must name a program")
        self.check()
        full_env = {**_ENV, **(env or {})}
        command_bytes(argv, full_env)  # what no program can be given is refused before anything starts
        with contextlib.ExitStack() as after:  # lives as long as the process
            with contextlib.ExitStack() as fds:  # closed once it started
                got = None
                quota: _PlainQuota | None = None
                if zygote and not self.unsandboxed:
                    got = _zygote.acquire(self._zygote_key(), self._make_zygote)
                if got is not None:  # the spare is in its run's cgroup already
                    group = got[1].group
                else:
                    group = None if zygote_ctl is not None else acquire(self.limits)
                    if group is not None:
                        after.callback(release, group)
                # RLIMIT_NPROC counts every process of the uid on the host (other sandboxes, js workers'
                # threads): with the cgroup's pids.max bounding this tree, it is not needed
                nproc = None if group is not None else self.limits.processes
                if got is not None:
                    made, spare = got
                    after.callback(_zygote.release, made)
                    try:
                        proc: subprocess.Popen[bytes] | Served | ZygoteRun | None = self._in_spare(
                            spare, argv, cwd, full_env, stdin, stderr, nproc
                        )
                    except BaseException:
                        spare.close()
                        raise
                    running = SandboxProcess(proc, group, after.pop_all())
                    try:
                        yield running
                    finally:
                        running.close()
                    return
                if self.unsandboxed:
                    workspace = self.workspace or Path(tempfile.mkdtemp(prefix="tether-scratch-"))
                    if self.workspace is None:
                        after.callback(remove_tree, workspace)
                    workspace.mkdir(parents=True, exist_ok=True)
                    full_argv = list(argv)
                    budget = None if nproc is None else _nproc_budget(nproc)
                    child = functools.partial(preexec, self.limits, budget, None, ())
                    pass_fds: tuple[int, ...] = ()
                    child_fds: list[int] = []
                    host_cwd: Path | None = _host_cwd(workspace, cwd)
                elif zygote_ctl is not None:
                    full_argv, _, child, child_fds = self._plan(argv, cwd, fds, None, zygote=True)
                    pass_fds, host_cwd = (zygote_ctl,), None
                else:
                    # bubblewrap's own clones are counted against every task of its uid on the host (the
                    # zygotes' and js workers' included): its RLIMIT_NPROC is what runs now plus the budget
                    budget = None if nproc is None else _nproc_budget(nproc, self._run_as)
                    if zygote and self._plain_quota():  # a run (not a worker) in a writable host workspace
                        quota = _PlainQuota(fds)
                        after.callback(quota.close)
                    full_argv, seccomp_fd, child, child_fds = self._plan(argv, cwd, fds, budget, quota=quota)
                    pass_fds = () if seccomp_fd is None else (seccomp_fd,)
                    if quota is not None:
                        pass_fds = (*pass_fds, quota.info_write)
                    host_cwd = None
                joins = [fds.enter_context(_opened(f)) for f in group.procs_files] if group else []
                prepare = functools.partial(child, cgroup_fds=joins)
                proc = None
                if not self.unsandboxed and forkserver.enabled:
                    with contextlib.suppress(OSError):  # no server: the slower fork of tether itself
                        proc = forkserver.spawn(
                            full_argv,
                            env=full_env,
                            cwd=None,
                            stdin=stdin,
                            stderr=stderr,
                            pass_fds=pass_fds,
                            child_fds=[*joins, *child_fds],
                            child=prepare,
                        )
                if proc is None:
                    proc = subprocess.Popen(
                        full_argv,
                        stdin=stdin,
                        stdout=subprocess.PIPE,
                        stderr=stderr,
                        pass_fds=pass_fds,
                        env=full_env,
                        cwd=host_cwd,
                        start_new_session=True,
                        preexec_fn=prepare(),
                    )
            running = SandboxProcess(proc, group, after.pop_all())
            running.quota = quota
            try:
                yield running
            finally:
                if not running.detached:
                    running.close()

    def _plan(
        self,
        argv: Sequence[str],
        cwd: str,
        fds: contextlib.ExitStack,
        nproc: int | None,
        *,
        zygote: bool = False,
        quota: _PlainQuota | None = None,
    ) -> tuple[list[str], int | None, Callable[..., Callable[[], None]], list[int]]:
        """The bwrap command line, the seccomp fd it reads, the pre-exec step (rlimits, staging, uid) and
        the fds that step uses. `zygote`: the command line of this configuration's zygote (no seccomp, no
        rlimits: each run gets its own). `quota`: lay the workspace quota's overlay (the plain path)."""
        if self.workspace is not None:
            self.workspace.mkdir(parents=True, exist_ok=True)
        idmap_fd = self._idmap()
        if self._hands_over(idmap_fd):
            _hand_over(self.workspace, self._run_as)  # pyright: ignore[reportArgumentType]  # _hands_over checked both
        sources = [p for p in (self.workspace, *self.ro_binds) if p is not None]
        if self._run_as is None or (
            idmap_fd is None and quota is None and all(_reachable(p, self._run_as) for p in sources)
        ):
            staged: list[tuple[str, str]] = []
            paths = [str(p) for p in sources]
        else:  # see _launch: bwrap, no longer root, finds each source staged in a private mount namespace
            staged = [(str(p), f"s{i}") for i, p in enumerate(sources)]
            paths = [f"{STAGE}/{name}" for _, name in staged]
        if self.workspace is None:
            paths.insert(0, "")
        seccomp_fd = None if zygote else _seccomp_fd(fds, self.network)
        plan = BwrapPlan(
            bwrap=find_bwrap() or "bwrap",
            uid=self.uid,
            workspace=paths[0] or None,
            chdir=str(Path(WORKSPACE, cwd)),
            network=self.network,
            tmp_bytes=self.limits.tmp_bytes,
            seccomp_fd=seccomp_fd,
            ro_binds=[(path, str(dest)) for path, dest in zip(paths[1:], self.ro_binds, strict=True)],
            workspace_bytes=self.limits.workspace_bytes,
            read_only=self.read_only or zygote,  # a zygote's spares lay an overlay on it (the quota)
            zygote=zygote,
            info_fd=None if quota is None else quota.info_write,
        )
        used_idmap = idmap_fd if staged and self.workspace is not None else None
        limits = None if zygote else self.limits
        overlay = None
        child_fds = [] if used_idmap is None else [used_idmap]
        if quota is not None:
            size = self.limits.workspace_bytes
            overlay = Overlay(paths[0], size, quota.theirs, userns=os.geteuid() != 0)
            child_fds.append(quota.theirs)
        child = functools.partial(preexec, limits, nproc, self._run_as, staged, used_idmap, overlay)
        return plan.argv(argv), seccomp_fd, child, child_fds

    def _copy_back(self, run: ZygoteRun) -> str | None:
        """Once every process of the run is gone, apply its overlay's changes to the host workspace, unless
        they pass the quota; why they do, or None."""
        upper = run.spare.upper
        if upper is None or self.workspace is None:
            return None
        # never copy while something could still write: a spare that reported has killed and reaped its
        # run's processes; one killed by tether takes them with its pid namespace
        if not run.reported and not run.spare.gone(5.0):
            run.kill()
            if not run.spare.gone(5.0):
                return _UNSTOPPED
        return self._apply(upper)

    def _copy_back_plain(self, running: SandboxProcess) -> str | None:
        """The plain path's copy-back: the same, once bubblewrap's sandbox (its pid namespace and cgroup)
        is empty."""
        quota = running.quota
        assert quota is not None
        upper = quota.upper()
        if upper is None:  # the child never laid the overlay: nothing ran
            return None
        try:
            if not quota.gone(running.group, 5.0):
                running.kill()
                if not quota.gone(running.group, 5.0):
                    return _UNSTOPPED
            return self._apply(upper)
        finally:
            os.close(upper)

    def _apply(self, upper: int) -> str | None:
        """Measure the upper layer against the quota and, within it, copy it onto the host workspace."""
        assert self.workspace is not None
        if (why := over_quota(upper, self.limits.workspace_bytes)) is not None:
            return why
        st = self.workspace.stat()
        copy_back(upper, str(self.workspace), owner=(st.st_uid, st.st_gid) if os.geteuid() == 0 else None)
        return None

    def _plain_quota(self) -> bool:
        """Whether a run on the plain path lays the quota overlay: a writable host workspace, where the
        kernel allows it (`tether sandbox check` says why not)."""
        if self.workspace is None or self.read_only:
            return False
        self.workspace.mkdir(parents=True, exist_ok=True)
        return overlay_support(str(self.workspace)) is None

    def _hands_over(self, idmap_fd: int | None) -> bool:
        """Whether the workspace is chowned to the sandbox's uid before a run (root, no idmapping)."""
        return (
            self._run_as is not None
            and idmap_fd is None
            and self.workspace is not None
            and not self.read_only
        )

    def _zygote_key(self) -> Hashable:
        """What makes two sandboxes' zygotes interchangeable: everything mounted, and who runs it."""
        where = None
        if self.workspace is not None:
            self.workspace.mkdir(parents=True, exist_ok=True)
            st = self.workspace.stat()
            where = (str(self.workspace), st.st_dev, st.st_ino)  # a workspace made again is another
        return (
            where,
            self.network,
            self.limits.tmp_bytes,
            self.limits.workspace_bytes,
            self.ro_binds,
            self.uid,
            self.idmap,
            self.read_only,
            (self.limits.memory_bytes, self.limits.processes, self.limits.cpu_cores),  # its spares' cgroups
        )

    def _make_zygote(self) -> Zygote:
        def start(argv: Sequence[str], ctl: int) -> SandboxProcess:
            with self._launch(argv, ".", None, stdin=subprocess.DEVNULL, zygote_ctl=ctl) as running:
                return running.detach()

        config = {
            "tmp_bytes": self.limits.tmp_bytes,
            "workspace": "tmpfs" if self.workspace is None else "bind" if self.read_only else "overlay",
            "workspace_bytes": self.limits.workspace_bytes,
            "network": self.network,
            "seccomp": _filter(self.network).hex(),
            "under_tmp": [str(p) for p in self.ro_binds if p.is_relative_to("/tmp")],
        }

        def place(spare: Spare) -> Cgroup | None:
            group = acquire(self.limits)
            if group is not None:
                try:
                    for procs in group.procs_files:
                        procs.write_text(str(spare.pid))
                except BaseException:
                    release(group, wait=False)
                    raise
            return group

        return Zygote(start, config, place)

    def _in_spare(
        self,
        spare: Spare,
        argv: Sequence[str],
        cwd: str,
        env: Mapping[str, str],
        stdin: int,
        stderr: int,
        nproc: int | None,
    ) -> ZygoteRun:
        """Start `argv` in a spare (already in the run's cgroup): its argv, environment and stdio."""
        if self._hands_over(self._idmap()):
            _hand_over(self.workspace, self._run_as)  # pyright: ignore[reportArgumentType]
        request = {
            "argv": list(argv),
            "env": dict(env),
            "cwd": str(Path(WORKSPACE, cwd)),
            # RLIMIT_NPROC counts a uid's processes per user namespace, and each run has its own
            "rlimits": rlimits(self.limits, nproc),
        }
        theirs: list[int] = []
        ends: list[IO[bytes] | None] = []
        try:
            for mode, reading in ((stdin, False), (subprocess.PIPE, True), (stderr, True)):
                if mode == subprocess.PIPE:
                    read, write = os.pipe2(os.O_CLOEXEC)
                    theirs.append(write if reading else read)
                    ends.append(open(read if reading else write, "rb" if reading else "wb", buffering=0))  # noqa: SIM115
                else:
                    theirs.append(os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC))
                    ends.append(None)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it died: a run it never took
                # as UTF-8 (not 12 bytes of escapes per emoji); the spare's json.loads reads surrogatepass
                message = json.dumps(request, ensure_ascii=False).encode("utf-8", "surrogatepass")
                socket.send_fds(spare.sock, [message], theirs)
        except BaseException:
            for end in ends:
                if end is not None:
                    end.close()
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        return ZygoteRun(spare, ends[0], ends[1], ends[2])

    def reads_whole_workspace(self) -> bool:
        """Whether sandboxed code reads every file of the workspace its owner can.

        Not so only as root, read-only, where the filesystem cannot idmap: the workspace is not handed over
        then, so the sandbox's uid reads only what any user may.
        """
        return self._run_as is None or not self.read_only or self._idmap() is not None

    def _idmap(self) -> int | None:
        """As root: a user namespace to idmap the workspace with (its owner -> the sandbox uid), if supported."""
        if self._run_as is None or not self.idmap or self.workspace is None:
            return None
        st = self.workspace.stat()
        ns_fd = userns_fd(st.st_uid, st.st_gid, self._run_as)
        if ns_fd is None or not supported(st.st_dev, str(self.workspace), ns_fd):
            return None
        return ns_fd


class SandboxProcess:
    """A process started in a sandbox (and its cgroup): `Sandbox.start` hands one to the caller.

    Attributes:
        proc: bubblewrap's process (or the program's, unsandboxed): a `subprocess.Popen`, or its like from
            the fork server; write requests to `proc.stdin`, read answers from `proc.stdout`.
    """

    def __init__(
        self,
        proc: subprocess.Popen[bytes] | Served | ZygoteRun,
        group: Cgroup | None,
        after: contextlib.ExitStack,
    ) -> None:
        self.proc = proc
        self.group = group
        self.detached = False
        self.quota: _PlainQuota | None = None
        """The plain path's workspace quota (a run in a writable host workspace), if laid."""
        self._after = after

    def detach(self) -> SandboxProcess:
        self.detached = True
        return self

    def kill(self) -> None:
        """SIGKILL the whole tree: its cgroup, its process group and so its pid namespace."""
        _kill_tree(self.proc, self.group)

    def poll(self) -> int | None:
        """Its exit status once it has exited (bubblewrap's, or the program's unsandboxed), else None."""
        return self.proc.poll()

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer struck in its cgroup since it started."""
        return self.group is not None and self.group.oom_kills() > self.group.oom_before

    def close(self) -> None:
        """Kill it if it still runs, reap it, close its pipes and release its cgroup."""
        if self.proc.poll() is None:
            self.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if isinstance(self.proc, ZygoteRun):
            self.proc.close()
        self._after.close()


_UNSTOPPED = "its processes could not be stopped, so its changes were not kept"


class _PlainQuota:
    """A plain-path run's quota: the socket its pre-exec step sends the overlay's upper layer on, and
    bubblewrap's `--info-fd` pipe, which names the sandbox's init (its pid namespace is empty once the init
    is gone)."""

    def __init__(self, fds: contextlib.ExitStack) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours
        self.theirs = theirs.fileno()
        fds.callback(theirs.close)  # the child's copy: closed once it started
        self.info_read, self.info_write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        fds.callback(os.close, self.info_write)
        self._info = b""

    def upper(self) -> int | None:
        """The upper layer's fd, if the child laid the overlay."""
        try:
            _, fds, _, _ = socket.recv_fds(self.sock, 16, 1, socket.MSG_DONTWAIT)
        except OSError:
            return None
        return fds[0] if fds else None

    def gone(self, group: Cgroup | None, timeout: float) -> bool:
        """Whether every process of the sandbox has exited (waiting up to `timeout` for it)."""
        if group is not None and not group.empty(timeout):
            return False
        pid = self._init_pid()
        if pid is None:  # bubblewrap never started the sandbox (or its cgroup is empty, checked above)
            return True
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:  # reaped: the kernel empties a pid namespace before its init exits
            return True
        try:
            if not _nested_init(pid):  # the pid went to another process since: the init is gone
                return True
            return bool(select.select([pidfd], [], [], timeout)[0])
        finally:
            os.close(pidfd)

    def _init_pid(self) -> int | None:
        with contextlib.suppress(OSError):  # what bubblewrap wrote, kept for the next look
            while len(self._info) < 4096 and (chunk := os.read(self.info_read, 4096)):
                self._info += chunk
        try:
            info: object = json.JSONDecoder().raw_decode(self._info.decode())[0]
            pid = cast("dict[str, object]", info).get("child-pid") if isinstance(info, dict) else None
        except ValueError:
            return None
        return pid if isinstance(pid, int) and pid > 0 else None

    def close(self) -> None:
        self.sock.close()
        os.close(self.info_read)


def _nested_init(pid: int) -> bool:
    """Whether `pid` is the init (pid 1) of a pid namespace below this one."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("NSpid:"):
            ids = line.split()[1:]
            return len(ids) > 1 and ids[-1] == "1"
    return False


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[int]:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        yield fd
    finally:
        os.close(fd)


def _host_cwd(workspace: Path, cwd: str) -> Path:
    path = (workspace / cwd).resolve()
    if not path.is_relative_to(workspace):
        raise ValueError(f"cwd {cwd!r} is outside the workspace")
    return path


def _kill_tree(proc: subprocess.Popen[bytes] | Served | ZygoteRun, group: Cgroup | None) -> None:
    # bwrap leads its own process group; --die-with-parent then takes the sandbox's init and, with it, the
    # whole pid namespace. (Unsandboxed, a child that called setsid escapes the group, not the cgroup.)
    if group is not None:
        group.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _nproc_budget(processes: int, uid: int | None = None) -> int:
    """RLIMIT_NPROC counts all of a uid's threads on the host: add what this uid already runs (its processes'
    threads too: tether's own worker threads, a zygote's receiving thread)."""
    uid = os.getuid() if uid is None else uid
    running = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    running += len(os.listdir(f"/proc/{entry.name}/task"))
    return running + processes


def _reachable(path: Path, uid: int) -> bool:
    """Whether `uid` can reach `path` through its ancestors (then no staging is needed; it saves a few mounts)."""
    for ancestor in path.parents:
        st = ancestor.stat()
        if not (st.st_mode & 0o001 or (st.st_uid == uid and st.st_mode & 0o100)):
            return False
    st = path.stat()
    return bool(st.st_uid == uid or st.st_mode & 0o005 == 0o005)


def _hand_over(workspace: Path, uid: int) -> None:
    """Give the workspace tree to the sandbox's host uid (tether runs as root), without following links."""
    if os.lstat(workspace).st_uid != uid:
        os.lchown(workspace, uid, uid)
    # fd-relative and never following links: a concurrent sandbox on the same workspace may swap a directory
    # for a symlink to /etc mid-walk, and a path-based walk would then chown the host's files to `uid`
    for _root, dirs, files, dir_fd in os.fwalk(workspace, follow_symlinks=False):
        for name in (*dirs, *files):
            with contextlib.suppress(FileNotFoundError):
                if os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_uid != uid:
                    os.chown(name, uid, uid, dir_fd=dir_fd, follow_symlinks=False)


def _seccomp_fd(stack: contextlib.ExitStack, network: bool) -> int:
    fd = os.memfd_create("tether-seccomp", os.MFD_CLOEXEC)
    stack.callback(os.close, fd)
    os.write(fd, _filter(network))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@cache
def _filter(network: bool) -> bytes:
    try:
        return sandbox_filter(network=network)
    except UnsupportedArchitecture as exc:
        raise SandboxUnavailable(f"{exc}; the sandbox supports x86_64 and aarch64") from exc
