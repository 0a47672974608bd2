"""The zygote's program: runs inside one bubblewrap sandbox and keeps spare, already isolated children.

Standard library only: it runs under the sandbox's `/usr/bin/python3`, given as `python3 -I -c SOURCE
CONFIG`, with its control socket to tether as the fd CONFIG names. bubblewrap starts it as uid 0 of a new user namespace
with that namespace's capabilities, in a read-only root with the workspace and the read-only binds mounted.

Each spare is made ahead of its run: a clone into new mount, pid, ipc (and, with the network off, network)
namespaces, pid 1 of its pid namespace, which mounts its own `/proc`, a fresh capped
`/tmp` and `/dev/shm`, and the workspace as configured (a fresh capped tmpfs, or an overlay whose upper layer
is a capped tmpfs); then it enters a nested user namespace mapping uid 65534 (where no further user namespace
can be made), drops every capability and its bounding set, makes itself not dumpable (its run shares its
uid) and waits. Its socket goes to tether, which reads
its host pid from the kernel (SCM_CREDENTIALS), moves it into the run's cgroup and later sends the run: argv,
environment, working directory, rlimits and the three stdio fds. The spare holds itself to the rlimits,
no_new_privs and the seccomp filter, posix_spawns the command in a new session, waits for it, kills and
reaps whatever the run left (setsid survivors included), reports the wait status and exits; with the pid
namespace's init gone, the kernel would kill anything left too.
"""

import contextlib
import ctypes
import json
import os
import resource
import signal
import socket
import sys
from typing import Any

UID = 65534
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x2, 0x4, 0x8
_MS_RDONLY, _MS_REMOUNT, _MS_BIND = 0x1, 0x20, 0x1000
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000
_MNT_DETACH = 0x2
_PR_SET_DUMPABLE = 4
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_SYS_CLONE = {"x86_64": 56, "aarch64": 220}[os.uname().machine]
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}[os.uname().machine]
_CAPABILITY_VERSION_3 = 0x20080522
_QUOTA_DIR = "/tmp/.tether-quota"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)
_libc.prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)
_libc.syscall.restype = ctypes.c_long


class _Fprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    enc = [None if x is None else x.encode() for x in (source, target, fstype, data)]
    _check(_libc.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def main() -> None:
    config: dict[str, Any] = json.loads(sys.argv[1])
    ctl = socket.socket(fileno=config["ctl"])
    # mounts made in a spare's namespace must never propagate back here (bubblewrap leaves them private)
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    signal.signal(signal.SIGCHLD, _reap)
    for _ in range(config["spares"]):
        _offer(ctl, config)
    while True:
        try:
            message = ctl.recv(16)
        except InterruptedError:
            continue
        if not message:  # tether closed its end: leave, and bubblewrap takes the namespace down
            os._exit(0)
        for _ in message:  # one byte per spare tether took
            _offer(ctl, config)


def _reap(signum: int, frame: object) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _offer(ctl: socket.socket, config: dict[str, Any]) -> None:
    """Make one spare and hand tether its socket."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)  # tether learns the spare's host pid
    pid = _clone(config["network"])
    if pid == 0:
        try:
            ctl.close()
            ours.close()
            _spare(theirs, config)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                theirs.send(json.dumps({"error": str(exc)}).encode())
        os._exit(1)
    theirs.close()
    if pid > 0:
        socket.send_fds(ctl, [b"s"], [ours.fileno()])
    ours.close()


def _clone(network: bool) -> int:
    """Fork into new mount, pid, ipc (and network) namespaces at once: the child is pid 1 of its own. A
    raw clone, not os.fork (this process has one thread, and the child only runs `_spare`); -1 on failure."""
    flags = _CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWIPC | (0 if network else _CLONE_NEWNET)
    return _libc.syscall(_SYS_CLONE, flags | signal.SIGCHLD, 0, 0, 0, 0)


def _spare(sock: socket.socket, config: dict[str, Any]) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
    tmp = f"size={config['tmp_bytes']},mode=0755"
    under_tmp: list[str] = config["under_tmp"]
    kept = [(dest, os.open(dest, os.O_PATH | os.O_CLOEXEC)) for dest in under_tmp]
    _mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV, tmp)
    for dest, fd in kept:  # read-only binds below /tmp, which the fresh /tmp would hide
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.makedirs(dest, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            os.close(os.open(dest, os.O_CREAT | os.O_WRONLY, 0o644))
        _mount(f"/proc/self/fd/{fd}", dest, None, _MS_BIND | _MS_REC, None)
        _mount(None, dest, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, None)
        os.close(fd)
    _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, tmp)
    upper: int | None = None
    mode = config["workspace"]
    if mode == "tmpfs":
        size = f"size={config['workspace_bytes']},mode=0700"
        _mount("tmpfs", "/workspace", "tmpfs", _MS_NOSUID | _MS_NODEV, size)
    elif mode == "overlay":
        upper = _overlay(config)
    _become_unprivileged()
    if upper is None:
        sock.send(b'{"ready": true}')
    else:
        socket.send_fds(sock, [b'{"ready": true}'], [upper])
        os.close(upper)
    _serve_one(sock, config["seccomp"])


def _overlay(config: dict[str, Any]) -> int:
    """`/workspace` as an overlay: the host workspace below, writes into a capped tmpfs. Returns an fd of
    the upper layer for tether (the tmpfs itself is detached, so the run never sees it)."""
    os.mkdir(_QUOTA_DIR, 0o700)
    size = config["workspace_bytes"]
    inodes = max(1024, size // 1024)
    _mount("tmpfs", _QUOTA_DIR, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={size},nr_inodes={inodes},mode=0755")
    os.mkdir(f"{_QUOTA_DIR}/upper", 0o755)
    os.mkdir(f"{_QUOTA_DIR}/work", 0o700)
    st = os.stat("/workspace")
    os.chown(f"{_QUOTA_DIR}/upper", st.st_uid, st.st_gid)
    os.chmod(f"{_QUOTA_DIR}/upper", st.st_mode & 0o7777)
    options = (
        f"lowerdir=/workspace,upperdir={_QUOTA_DIR}/upper,workdir={_QUOTA_DIR}/work,"
        "userxattr,redirect_dir=nofollow,metacopy=off,index=off"
    )
    _mount("overlay", "/workspace", "overlay", _MS_NOSUID | _MS_NODEV, options)
    upper = os.open(f"{_QUOTA_DIR}/upper", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    _check(_libc.umount2(_QUOTA_DIR.encode(), _MNT_DETACH), "detach the quota tmpfs")
    os.rmdir(_QUOTA_DIR)
    return upper


def _become_unprivileged() -> None:
    """A nested user namespace where uid 65534 is this namespace's 0, no user namespace can be made below,
    and no capability is left (bounding set included)."""
    _check(_libc.unshare(_CLONE_NEWUSER), "unshare(CLONE_NEWUSER)")
    _write("/proc/self/uid_map", f"{UID} 0 1\n")
    _write("/proc/self/setgroups", "deny\n")
    _write("/proc/self/gid_map", f"{UID} 0 1\n")
    _write("/proc/sys/user/max_user_namespaces", "0\n")
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        _check(_libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "drop the bounding set")
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    os.setresgid(UID, UID, UID)
    os.setresuid(UID, UID, UID)
    # the creator of a user namespace holds every capability in it, and the uid it maps never was this
    # namespace's 0, so the setresuid above cleared nothing: clear them all (the command, exec'd with an
    # empty bounding set, gets none either way, but this process must hold none its run could use)
    caps = (_CapData * 2)()
    _check(_libc.syscall(_SYS_CAPSET, ctypes.byref(_CapHeader(_CAPABILITY_VERSION_3, 0)), caps), "capset")
    # and not dumpable: the run's processes share its uid, and must not ptrace it, read its memory or
    # take its socket to tether (pidfd_getfd) to report a run that never ended
    _check(_libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "not dumpable")


def _serve_one(sock: socket.socket, seccomp: str) -> None:
    """Wait for the run, start it, end everything it left, report how it ended, and exit."""
    try:
        message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3, socket.MSG_CMSG_CLOEXEC)
    except OSError:
        os._exit(1)
    if not message or len(fds) != 3:
        os._exit(1)
    run: dict[str, Any] = json.loads(message)
    with contextlib.suppress(OSError):
        sock.send(b'{"started": true}')  # from here, an end without a report means the run was killed
    try:
        status = _spawn(run, fds, seccomp)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.write(fds[2], f"sandbox: {exc}\n".encode())
        status = 1 << 8  # exit status 1
    with contextlib.suppress(OSError):
        sock.send(json.dumps({"status": status}).encode())
    os._exit(0)  # the namespace's init: everything left in it is killed now


def _spawn(run: dict[str, Any], fds: list[int], seccomp: str) -> int:
    """Hold this process to the run's limits (working directory, rlimits, no_new_privs, the seccomp filter:
    all inherited), start the command in a session of its own with the run's stdio (posix_spawn: no copy
    of this interpreter), and reap every orphan until the command ends; its wait status."""
    cwd, argv, env = str(run["cwd"]), list[str](run["argv"]), dict[str, str](run["env"])
    try:
        os.chdir(cwd)
    except OSError as exc:
        os.write(fds[2], f"bwrap: Can't chdir to {cwd}: {exc.strerror}\n".encode())
        return 1 << 8
    limits: list[tuple[int, int]] = run["rlimits"]
    for which, value in limits:
        resource.setrlimit(which, (value, value))
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    program = bytes.fromhex(seccomp)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(_libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0), "seccomp")
    os.environ["PATH"] = env.get("PATH", os.defpath)  # posix_spawnp searches this process's PATH
    try:
        pid = os.posix_spawnp(
            argv[0],
            argv,
            env,
            file_actions=[(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(fds)],
            setsid=True,
            setsigmask=(),
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, signal.SIGINT),
        )
    except OSError as exc:
        os.write(fds[2], f"bwrap: execvp {argv[0]}: {exc.strerror}\n".encode())
        return 1 << 8
    for fd in fds:
        os.close(fd)
    status = 0
    while True:  # pid 1: reap every orphan until the command itself ends
        try:
            done, code = os.wait()
        except InterruptedError:
            continue
        if done == pid:
            status = code
            break
    # then end whatever it left (setsid survivors, daemons): a fork racing this kill fails, and every
    # orphan comes to pid 1, so once none is left to reap nothing of the run runs or writes any more
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)
    while True:
        try:
            os.wait()
        except InterruptedError:
            continue
        except ChildProcessError:
            return status


if __name__ == "__main__":
    main()
