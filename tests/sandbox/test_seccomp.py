"""The seccomp filter, run through a tiny classic-BPF interpreter: every decision checked without a kernel."""

import errno
import socket
import struct

import pytest

from tether.sandbox._seccomp import UnsupportedArchitecture, sandbox_filter

X86_64, AARCH64, I386 = 0xC000003E, 0xC00000B7, 0x40000003
ALLOW, KILL = 0x7FFF0000, 0x80000000


def run(program: bytes, *, arch: int, nr: int, arg0: int = 0, args: tuple[int, ...] = ()) -> int:
    """Interpret the subset of classic BPF the filter uses over a seccomp_data record."""
    values = (arg0, *args[1:]) if args else (arg0,)
    data = struct.pack("=iIQ6Q", nr, arch, 0, *values, *([0] * (6 - len(values))))
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
        elif code == 0x45:
            pc += jt if acc & k else jf
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
    program = sandbox_filter(machine)
    for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_PACKET, 40):
        assert errno_of(run(program, arch=arch, nr=socket_nr, arg0=family)) == errno.EACCES
    assert run(program, arch=arch, nr=socket_nr, arg0=socket.AF_UNIX) == ALLOW


@pytest.mark.parametrize(("machine", "arch"), [("x86_64", X86_64), ("aarch64", AARCH64)])
def test_io_uring_and_openat2_are_refused_because_the_filter_cannot_see_inside_them(
    machine: str, arch: int
) -> None:
    program = sandbox_filter(machine)
    assert [errno_of(run(program, arch=arch, nr=nr)) for nr in (425, 426, 427, 437)] == [errno.ENOSYS] * 4


@pytest.mark.parametrize(
    ("machine", "arch", "nrs"),
    [
        ("x86_64", X86_64, (248, 249, 250, 321, 298, 323)),
        ("aarch64", AARCH64, (217, 218, 219, 280, 241, 282)),
    ],
)
def test_keyrings_bpf_perf_and_userfaultfd_are_refused(machine: str, arch: int, nrs: tuple[int, ...]) -> None:
    program = sandbox_filter(machine)
    assert [errno_of(run(program, arch=arch, nr=nr)) for nr in nrs] == [errno.ENOSYS] * len(nrs)


def test_ordinary_syscalls_are_allowed() -> None:
    program = sandbox_filter("x86_64")
    assert [run(program, arch=X86_64, nr=nr) for nr in (0, 1, 2, 57, 59, 231)] == [ALLOW] * 6


def test_x32_syscalls_and_foreign_architectures_are_refused() -> None:
    program = sandbox_filter("x86_64")
    assert errno_of(run(program, arch=X86_64, nr=0x40000000 + 41, arg0=socket.AF_INET)) == errno.ENOSYS
    assert run(program, arch=I386, nr=102) == KILL  # socketcall through int 0x80


def test_unknown_architectures_are_refused_at_build_time() -> None:
    with pytest.raises(UnsupportedArchitecture):
        sandbox_filter("riscv64")


@pytest.mark.parametrize(
    ("call", "nr", "index"),
    [
        ("chmod", 90, 1),
        ("fchmod", 91, 1),
        ("fchmodat", 268, 2),
        ("open", 2, 2),
        ("openat", 257, 3),
        ("mkdir", 83, 1),
    ],
)
def test_setuid_and_setgid_modes_are_refused(call: str, nr: int, index: int) -> None:
    program = sandbox_filter("x86_64")
    args = (*([0] * index), 0o4755)
    assert errno_of(run(program, arch=X86_64, nr=nr, args=args)) == errno.EPERM, call
    args = (*([0] * index), 0o2775)
    assert errno_of(run(program, arch=X86_64, nr=nr, args=args)) == errno.EPERM, call
    args = (*([0] * index), 0o755)
    assert run(program, arch=X86_64, nr=nr, args=args) == ALLOW, call


def test_with_the_network_on_sockets_are_allowed_and_the_rest_still_applies() -> None:
    program = sandbox_filter("x86_64", network=True)
    assert run(program, arch=X86_64, nr=41, arg0=socket.AF_INET) == ALLOW
    assert errno_of(run(program, arch=X86_64, nr=90, args=(0, 0o4755))) == errno.EPERM
    assert errno_of(run(program, arch=X86_64, nr=425)) == errno.ENOSYS
