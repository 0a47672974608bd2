"""A tiny, dependency-free seccomp filter: no network sockets, no setuid/setgid files, less kernel surface.

bubblewrap's `--seccomp FD` loads a compiled classic-BPF program. The one built here is short enough to read:

    load arch;  foreign arch (i386 via int 0x80, ...)                    -> kill the process
    load nr;    x32 ABI syscall numbers (x86_64 only)                     -> ENOSYS
                io_uring_setup/_enter/_register (IORING_OP_SOCKET skips seccomp), openat2 (its mode is
                in a struct the filter cannot read; libc falls back to openat), and attack surface
                nothing needs here: add_key/request_key/keyctl, bpf, perf_event_open, userfaultfd -> ENOSYS
                socket(family, ...) with family != AF_UNIX, network off  -> EACCES
                chmod/fchmod/fchmodat(2), open/openat/creat, mkdir(at), mknod(at) with a mode carrying
                S_ISUID or S_ISGID                                        -> EPERM
    everything else                                                       -> allow

A new network namespace already leaves only an isolated loopback; the socket rule makes the refusal immediate
and explicit. The mode rule matters when tether runs as root and the workspace is idmapped: a file the sandbox
creates is root's on the host, and must never be a setuid-root program.
"""

from __future__ import annotations

import errno
import platform
import socket
import struct
from dataclasses import dataclass

__all__ = ["UnsupportedArchitecture", "sandbox_filter"]

# classic BPF opcodes (linux/filter.h, linux/bpf_common.h)
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

# seccomp return values (linux/seccomp.h)
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000

# offsets into struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6];}; an arg's low word on LE
_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARGS = 16

_X32_SYSCALL_BIT = 0x40000000
_SETID_BITS = 0o6000  # S_ISUID | S_ISGID


@dataclass(frozen=True)
class _Arch:
    audit_arch: int
    socket_nr: int
    nosys: tuple[int, ...]
    """Calls refused outright: io_uring and openat2 (the filter cannot see inside them), and kernel surface
    no sandboxed program needs (keyrings, bpf, perf events, userfaultfd)."""
    mode_args: tuple[tuple[int, int], ...]
    """(syscall, index of its mode argument) for every call that sets a file mode."""
    has_x32: bool


_ARCHES = {
    "x86_64": _Arch(
        audit_arch=0xC000003E,
        socket_nr=41,
        # io_uring_setup/_enter/_register, openat2, add_key, request_key, keyctl, bpf, perf_event_open, userfaultfd
        nosys=(425, 426, 427, 437, 248, 249, 250, 321, 298, 323),
        # chmod, fchmod, fchmodat, fchmodat2, open, openat, creat, mkdir, mkdirat, mknod, mknodat
        mode_args=(
            (90, 1),
            (91, 1),
            (268, 2),
            (452, 2),
            (2, 2),
            (257, 3),
            (85, 1),
            (83, 1),
            (258, 2),
            (133, 1),
            (259, 2),
        ),
        has_x32=True,
    ),
    "aarch64": _Arch(
        audit_arch=0xC00000B7,
        socket_nr=198,
        nosys=(425, 426, 427, 437, 217, 218, 219, 280, 241, 282),
        # fchmod, fchmodat, fchmodat2, openat, mkdirat, mknodat
        mode_args=((52, 1), (53, 2), (452, 2), (56, 3), (34, 2), (33, 2)),
        has_x32=False,
    ),
}


class UnsupportedArchitecture(RuntimeError):
    """No seccomp filter is known for this machine's architecture."""


def sandbox_filter(machine: str | None = None, *, network: bool = False) -> bytes:
    """Compile the filter for `machine` (default: this one) to the bytes bubblewrap reads from `--seccomp FD`.

    Args:
        machine: `x86_64` or `aarch64`.
        network: leave sockets alone (the sandbox shares the host's network).

    Raises:
        UnsupportedArchitecture: for other machines.
    """
    name = machine or platform.machine()
    arch = _ARCHES.get(name)
    if arch is None:
        raise UnsupportedArchitecture(f"no seccomp filter for architecture {name!r}")
    prog = _Program()
    prog.load(_OFF_ARCH)
    prog.jump_if(_JEQ_K, arch.audit_arch, then="check_nr", otherwise="kill")
    prog.label("check_nr")
    prog.load(_OFF_NR)
    if arch.has_x32:
        prog.jump_if(_JGE_K, _X32_SYSCALL_BIT, then="nosys", otherwise=None)
    for nr in arch.nosys:
        prog.jump_if(_JEQ_K, nr, then="nosys", otherwise=None)
    if not network:
        prog.jump_if(_JEQ_K, arch.socket_nr, then="socket", otherwise=None)
    for nr, index in arch.mode_args:
        prog.jump_if(_JEQ_K, nr, then=f"mode{index}", otherwise=None)
    prog.ret(_RET_ALLOW)
    if not network:
        prog.label("socket")
        prog.load(_OFF_ARGS)
        prog.jump_if(_JEQ_K, socket.AF_UNIX, then="allow", otherwise="eacces")
    for index in sorted({index for _, index in arch.mode_args}):
        prog.label(f"mode{index}")
        prog.load(_OFF_ARGS + 8 * index)
        prog.jump_if(_JSET_K, _SETID_BITS, then="eperm", otherwise="allow")
    prog.label("allow")
    prog.ret(_RET_ALLOW)
    prog.label("eacces")
    prog.ret(_RET_ERRNO | errno.EACCES)
    prog.label("eperm")
    prog.ret(_RET_ERRNO | errno.EPERM)
    prog.label("nosys")
    prog.ret(_RET_ERRNO | errno.ENOSYS)
    prog.label("kill")
    prog.ret(_RET_KILL_PROCESS)
    return prog.assemble()


class _Program:
    """A classic-BPF assembler with forward labels; `None` as a jump target means the next instruction."""

    def __init__(self) -> None:
        self._ins: list[tuple[int, str | None, str | None, int]] = []
        self._labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self._ins.append((_LD_W_ABS, None, None, offset))

    def jump_if(self, op: int, k: int, *, then: str | None, otherwise: str | None) -> None:
        self._ins.append((op, then, otherwise, k))

    def ret(self, value: int) -> None:
        self._ins.append((_RET_K, None, None, value))

    def label(self, name: str) -> None:
        self._labels[name] = len(self._ins)

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (code, then, otherwise, k) in enumerate(self._ins):
            out += struct.pack("=HBBI", code, self._offset(index, then), self._offset(index, otherwise), k)
        return bytes(out)

    def _offset(self, index: int, target: str | None) -> int:
        if target is None:
            return 0
        offset = self._labels[target] - index - 1
        if not 0 <= offset <= 255:  # a jump is a forward u8; the program is far shorter than that
            raise AssertionError(f"jump to {target} out of range")
        return offset
