"""Escape attempts against the sandbox, each asserted to end contained (run as root on CI, as attackers hope).

Network attacks only ever target listeners this file starts on 127.0.0.1.
"""

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tether.sandbox import Sandbox, SandboxLimits
from tether.sandbox._sandbox import _hand_over  # pyright: ignore[reportPrivateUsage]  # the code under attack


def _alive(marker: str) -> list[int]:
    """Host pids whose command line contains `marker`."""
    pids: list[int] = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                pids.append(int(entry.name))
    return pids


def _wait_gone(marker: str, seconds: float = 2.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (pids := _alive(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids


@pytest.fixture
def tcp_listener() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


@pytest.fixture
def udp_listener() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


# ------------------------------------------------------------------------------------------ filesystem


def test_writes_outside_the_workspace_fail_and_reach_nothing_on_the_host(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    name = f"pwned-{uuid.uuid4().hex}"
    script = f"for d in / /usr /etc /workspace/.. /tmp/..; do echo x > $d/{name} && echo WROTE $d; done; true"
    result = sandbox.run(["sh", "-c", script])
    assert "WROTE" not in result.stdout
    for host_dir in (Path("/"), Path("/usr"), Path("/etc"), tmp_path):
        assert not (host_dir / name).exists()


def test_the_private_tmp_is_not_the_hosts(sandbox: Sandbox) -> None:
    name = f"marker-{uuid.uuid4().hex}"
    result = sandbox.run(["sh", "-c", f"echo x > /tmp/{name} && cat /tmp/{name}"])
    assert (result.exit_code, result.stdout) == (0, "x\n")
    assert not Path("/tmp", name).exists()


def test_host_secrets_are_not_readable(sandbox: Sandbox, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2")
    secret.chmod(0o600)
    paths = ["/etc/shadow", "/root/.bashrc", str(secret), "/workspace/../secret.txt", "/proc/1/environ"]
    result = sandbox.run(["sh", "-c", " ; ".join(f"cat {p}" for p in paths) + "; env"])
    assert "hunter2" not in result.stdout
    assert "root:" not in result.stdout  # no shadow entries
    assert "No such file or directory" in result.stderr
    assert not any(key in result.stdout for key in ("GITHUB_", "AWS_", "OPENAI_", "VIRTUAL_ENV"))


def test_remounting_a_read_only_bind_writable_fails(sandbox: Sandbox) -> None:
    name = f"pwned-{uuid.uuid4().hex}"
    script = (
        "grep CapEff /proc/self/status; "
        "mount -o remount,rw /usr && echo REMOUNTED; "
        "mount -o remount,rw,bind /usr && echo REMOUNTED; "
        "mount -t tmpfs none /usr && echo MOUNTED; "
        f"echo x > /usr/{name} && echo WROTE; "
        "unshare -r -m sh -c 'mount -o remount,rw /usr && echo NESTED' ; true"
    )
    result = sandbox.run(["sh", "-c", script])
    assert result.stdout.splitlines()[0].split() == ["CapEff:", "0000000000000000"]
    assert not any(word in result.stdout for word in ("REMOUNTED", "MOUNTED", "WROTE", "NESTED"))
    assert not Path("/usr", name).exists()


def test_runs_as_an_unprivileged_uid_without_capabilities(sandbox: Sandbox, workspace: Path) -> None:
    result = sandbox.run(["sh", "-c", "id -u; grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status; touch mine"])
    lines = result.stdout.split()
    assert lines[0] == "65534"
    assert lines[2::2] == ["0000000000000000"] * 4
    # files it creates belong to the workspace's owner on the host (idmapped mount, or handed-over workspace)
    assert (workspace / "mine").stat().st_uid == workspace.stat().st_uid


_TAKE_OVER_PID_1 = """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
found = {}
with open("/proc/1/status") as status:
    found.update(line.split(":")[0:2] for line in status if line.startswith(("CapEff", "CapPrm")))
for name in ("mem", "environ"):
    try:
        open(f"/proc/1/{name}", "rb").read(1); found[name] = "READ"
    except OSError as exc:
        found[name] = exc.strerror
if libc.ptrace(16, 1, None, None) == 0:  # PTRACE_ATTACH
    found["ptrace"] = "ATTACHED"; libc.ptrace(17, 1, None, None)
pidfd = libc.syscall(434, 1, 0)  # pidfd_open
taken = [n for n in range(64) if pidfd >= 0 and libc.syscall(438, pidfd, n, 0) >= 0]  # pidfd_getfd
found["taken"] = len(taken)
print(json.dumps({k: v.strip() if isinstance(v, str) else v for k, v in found.items()}))
"""


def test_pid_1_holds_no_capability_and_a_spare_cannot_be_taken_over(
    sandbox: Sandbox, spawn_path: str
) -> None:
    """pid 1 of a run's namespace: a zygote's spare (it holds the socket that reports the run's end to
    tether, which then copies the changes back) or bubblewrap's init. Neither holds a capability; a spare,
    which shares the run's uid, cannot be ptraced, read or robbed of its fds (pidfd_getfd)."""
    result = sandbox.run(["python3", "-c", _TAKE_OVER_PID_1])
    found = json.loads(result.stdout)
    assert (found["CapEff"], found["CapPrm"]) == ("0000000000000000", "0000000000000000")
    if spawn_path == "zygote":
        assert (found["mem"], found["environ"]) == ("Permission denied", "Permission denied")
        assert "ptrace" not in found
        assert found["taken"] == 0


def test_outside_too_the_sandbox_is_not_root(sandbox: Sandbox) -> None:
    """Seen from the host, sandboxed processes run as an unprivileged uid even when tether is root (a kuid 0
    sandbox would be exempt from RLIMIT_NPROC)."""
    marker = f"whoami-{uuid.uuid4().hex}"
    runner = threading.Thread(
        target=sandbox.run, args=(["python3", "-c", "import time; time.sleep(4)", marker],)
    )
    runner.start()
    try:
        pids: list[int] = []
        for _ in range(150):  # the sandbox can take a while to start on a busy machine
            if pids := _alive(marker):
                break
            time.sleep(0.02)
        uids = {Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split()[0] for pid in pids}
    finally:
        runner.join()
    assert uids == {str(65534 if os.geteuid() == 0 else os.geteuid())}


def test_host_processes_are_invisible_and_unkillable(sandbox: Sandbox) -> None:
    result = sandbox.run(
        ["sh", "-c", f"ls /proc | grep -c '^[0-9]'; kill -9 {os.getpid()} && echo KILLED; true"]
    )
    assert int(result.stdout.split()[0]) <= 4  # bwrap's init, sh, ls, grep
    assert "KILLED" not in result.stdout


# --------------------------------------------------------------------------------------------- network


def test_tcp_to_a_host_listener_on_localhost_is_refused(
    sandbox: Sandbox, tcp_listener: socket.socket
) -> None:
    port = tcp_listener.getsockname()[1]
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2); print('CONNECTED')"
    result = sandbox.run(["python3", "-c", code])
    assert result.exit_code == 1
    assert "PermissionError: [Errno 13] Permission denied" in result.stderr
    with pytest.raises(BlockingIOError):
        tcp_listener.accept()


def test_udp_and_dns_are_refused(sandbox: Sandbox, udp_listener: socket.socket) -> None:
    port = udp_listener.getsockname()[1]
    udp = (
        f"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))"
    )
    dns = "import socket; socket.getaddrinfo('example.com', 443)"
    assert "PermissionError" in sandbox.run(["python3", "-c", udp]).stderr
    assert "socket.gaierror" in sandbox.run(["python3", "-c", dns]).stderr
    with pytest.raises(BlockingIOError):
        udp_listener.recv(16)


def test_raw_netlink_and_ipv6_sockets_are_refused_but_unix_sockets_work(sandbox: Sandbox) -> None:
    code = (
        "import socket\n"
        "kinds = [(socket.AF_INET6, 1), (socket.AF_NETLINK, 3), (socket.AF_PACKET, 3), (socket.AF_INET, 3)]\n"
        "for fam, kind in kinds:\n"
        "    try: socket.socket(fam, kind); print('OPENED', fam)\n"
        "    except OSError as e: print(e.errno)\n"
        "a, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())\n"
    )
    result = sandbox.run(["python3", "-c", code])
    assert result.stdout.split() == ["13", "13", "13", "13", "ok"]


# ------------------------------------------------------------------------------------------- resources


def test_a_fork_bomb_is_stopped_by_the_process_limit(workspace: Path) -> None:
    limits = SandboxLimits(processes=32, timeout_s=10)
    code = (
        "import os, time\n"
        "n = 0\n"
        "while True:\n"
        "    try: pid = os.fork()\n"
        "    except BlockingIOError: print('REFUSED', n); break\n"
        "    if pid == 0: time.sleep(30); os._exit(0)\n"
        "    n += 1\n"
    )
    result = Sandbox(workspace, limits=limits).run(["python3", "-c", code])
    refused, forked = result.stdout.split()
    assert refused == "REFUSED"
    assert int(forked) < 32
    assert not result.timed_out  # stopped by the limit, not by the timeout


def test_a_shell_fork_bomb_ends_with_the_timeout_and_leaves_nothing(workspace: Path) -> None:
    marker = f"bomb{uuid.uuid4().hex[:8]}"
    result = Sandbox(workspace, limits=SandboxLimits(processes=32, timeout_s=2)).run(
        ["sh", "-c", f"{marker}() {{ {marker} | {marker} & }}; {marker}; sleep 30"]
    )
    assert result.duration_ms < 10_000  # it ended (by the timeout, or when the shell could not fork)
    assert _wait_gone(marker) == []


def test_a_memory_bomb_fails_to_allocate(sandbox: Sandbox) -> None:
    result = sandbox.run(["python3", "-c", "x = []\nwhile True: x.append(bytearray(16 * 1024 * 1024))"])
    assert result.exit_code == 1
    assert result.stderr.rstrip().endswith("MemoryError")


def test_filling_the_disk_stops_at_the_file_size_limit(
    sandbox: Sandbox, workspace: Path, limits: SandboxLimits
) -> None:
    result = sandbox.run(["sh", "-c", "dd if=/dev/zero of=/workspace/big bs=1M count=100 2>&1; echo $?"])
    assert (workspace / "big").stat().st_size == limits.file_size_bytes
    assert result.stdout.splitlines()[-1] == str(128 + 25)  # dd was killed by SIGXFSZ


def test_filling_tmp_stops_at_its_size(sandbox: Sandbox) -> None:
    result = sandbox.run(["sh", "-c", "dd if=/dev/zero of=/tmp/big bs=1M count=100 2>&1"])
    assert "No space left on device" in result.stdout


def test_an_output_flood_is_truncated_and_killed(sandbox: Sandbox, limits: SandboxLimits) -> None:
    result = sandbox.run(["yes"], timeout_s=10)
    assert result.truncated
    assert len(result.stdout) == limits.output_bytes
    assert not result.timed_out  # stopped by the limit, not by the timeout


def test_a_cpu_spin_ends_at_the_timeout(sandbox: Sandbox) -> None:
    result = sandbox.run(["python3", "-c", "while True: pass"], timeout_s=1)
    assert (result.timed_out, result.exit_code) == (True, -9)
    assert result.duration_ms >= 1000


# ------------------------------------------------------------------------------------ process lifetime


def test_sleeping_children_do_not_outlive_the_timeout(sandbox: Sandbox) -> None:
    marker = f"sleeper-{uuid.uuid4().hex}"
    sleeper = f"python3 -c 'import time; time.sleep(60)' {marker}"
    result = sandbox.run(["sh", "-c", f"{sleeper} & {sleeper} & wait"], timeout_s=1)
    assert result.timed_out
    assert _wait_gone(marker) == []


def test_setsid_children_do_not_outlive_the_timeout(sandbox: Sandbox) -> None:
    marker = f"daemon-{uuid.uuid4().hex}"
    daemon = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0: time.sleep(60)\n"
        "    os._exit(0)\n"
        "time.sleep(60)\n"
    )
    result = sandbox.run(["python3", "-c", daemon, marker], timeout_s=1)
    assert result.timed_out
    assert _wait_gone(marker) == []


def test_setsid_children_do_not_outlive_a_normal_exit(sandbox: Sandbox) -> None:
    marker = f"orphan-{uuid.uuid4().hex}"
    result = sandbox.run(
        ["sh", "-c", f"setsid python3 -c 'import time; time.sleep(60)' {marker} & echo left"]
    )
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "left\n", False)
    assert _wait_gone(marker) == []


def test_handing_the_workspace_over_never_follows_a_symlink_swapped_in(
    workspace: Path, tmp_path: Path, exchanging: Callable[[Path, Path], AbstractContextManager[None]]
) -> None:
    """As root the workspace is chowned to the sandbox uid before a run. A concurrent sandbox on the same
    workspace swapping a directory and a symlink to a host directory (renameat2 RENAME_EXCHANGE, atomic) must
    not get the host directory's files chowned. (A path-based os.walk loses this race within seconds.)"""
    if os.geteuid() != 0:
        pytest.skip("the hand-over only happens when tether runs as root")
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    (host_dir / "precious").write_text("root's")
    (workspace / "d").mkdir()
    (workspace / "d" / "f").write_text("x")
    (workspace / "e").symlink_to(host_dir)
    with exchanging(workspace / "d", workspace / "e"):
        for _ in range(3000):
            _hand_over(workspace, 65534)
    assert (host_dir / "precious").stat().st_uid == 0
    assert host_dir.stat().st_uid == 0


def test_setuid_files_cannot_be_made(sandbox: Sandbox, workspace: Path) -> None:
    """As root with an idmapped workspace, a sandbox-made file is root's on the host: never setuid."""
    code = (
        "import os\n"
        "open('prog', 'w').close()\n"
        "for make in (lambda: os.chmod('prog', 0o4755), lambda: os.open('p2', os.O_CREAT | os.O_WRONLY, 0o4755),\n"
        "             lambda: os.mkdir('d', 0o2775)):\n"
        "    try: make(); print('MADE')\n"
        "    except PermissionError: print('refused')\n"
    )
    result = sandbox.run(["python3", "-c", code])
    assert result.stdout.split() == ["refused"] * 3
    assert not (workspace / "prog").stat().st_mode & 0o6000
