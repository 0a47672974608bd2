"""The seccomp filter, run through a tiny classic-BPF interpreter: every decision checked without a kernel."""

import errno
import socket
import struct

import pytest

from tether.sandbox import network_filter
from tether.sandbox._seccomp import UnsupportedArchitecture

X86_64, AARCH64, I386 = 0xC000003E, 0xC00000B7, 0x40000003
ALLOW, KILL = 0x7FFF0000, 0x80000000


def run(program: bytes, *, arch: int, nr: int, arg0: int = 0) -> int:
    """Interpret the subset of classic BPF the filter uses over a seccomp_data record."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    ins = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = ins[pc]
        if code == 0x20:
            acc = struct.unpack_from("=I", data, k)[0]
        elif code == 0x15:
            pc += jt if acc == k else jf
        elif code == 0x35:
            pc += jt if acc >= k else jf
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
        pc += 1


def errno_of(action: int) -> int:
    assert action & 0xFFFF0000 == 0x00050000
    return action & 0xFFFF


@pytest.mark.parametrize(
    ("machine", "arch", "socket_nr"), [("x86_64", X86_64, 41), ("aarch64", AARCH64, 198)]
)
def test_network_sockets_are_refused_and_unix_sockets_allowed(
    machine: str, arch: int, socket_nr: int
) -> None:
    program = network_filter(machine)
    for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_PACKET, 40):
        assert errno_of(run(program, arch=arch, nr=socket_nr, arg0=family)) == errno.EACCES
    assert run(program, arch=arch, nr=socket_nr, arg0=socket.AF_UNIX) == ALLOW


@pytest.mark.parametrize(("machine", "arch"), [("x86_64", X86_64), ("aarch64", AARCH64)])
def test_io_uring_is_refused_because_it_can_open_sockets_past_seccomp(machine: str, arch: int) -> None:
    program = network_filter(machine)
    assert [errno_of(run(program, arch=arch, nr=nr)) for nr in (425, 426, 427)] == [errno.ENOSYS] * 3


def test_ordinary_syscalls_are_allowed() -> None:
    program = network_filter("x86_64")
    assert [run(program, arch=X86_64, nr=nr) for nr in (0, 1, 2, 57, 59, 231)] == [ALLOW] * 6


def test_x32_syscalls_and_foreign_architectures_are_refused() -> None:
    program = network_filter("x86_64")
    assert errno_of(run(program, arch=X86_64, nr=0x40000000 + 41, arg0=socket.AF_INET)) == errno.ENOSYS
    assert run(program, arch=I386, nr=102) == KILL  # socketcall through int 0x80


def test_unknown_architectures_are_refused_at_build_time() -> None:
    with pytest.raises(UnsupportedArchitecture):
        network_filter("riscv64")
