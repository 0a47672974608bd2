"""A tiny, dependency-free seccomp filter that refuses network sockets.

bubblewrap's `--seccomp FD` loads a compiled classic-BPF program. The one built here is short enough to read:

    load arch;      foreign arch (i386 via int 0x80, ...)          -> kill the process
    load nr;        x32 ABI syscall numbers (x86_64 only)           -> ENOSYS
                    io_uring_setup / _enter / _register             -> ENOSYS (IORING_OP_SOCKET skips seccomp)
                    socket(family, ...) with family != AF_UNIX       -> EACCES
    everything else                                                  -> allow

A new network namespace already leaves only an isolated loopback; the filter makes the refusal immediate and
explicit (`socket: Permission denied`) and shrinks the kernel surface a sandboxed program can reach.
"""

from __future__ import annotations

import errno
import platform
import socket
import struct
from dataclasses import dataclass

__all__ = ["UnsupportedArchitecture", "network_filter"]

# classic BPF opcodes (linux/filter.h, linux/bpf_common.h)
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

# seccomp return values (linux/seccomp.h)
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000

# offsets into struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6];}; args[0]'s low word on LE
_OFF_NR = 0
_OFF_ARCH = 4
_OFF_ARG0 = 16

_X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class _Arch:
    audit_arch: int
    socket_nr: int
    io_uring_nrs: tuple[int, ...]
    has_x32: bool


_ARCHES = {
    "x86_64": _Arch(audit_arch=0xC000003E, socket_nr=41, io_uring_nrs=(425, 426, 427), has_x32=True),
    "aarch64": _Arch(audit_arch=0xC00000B7, socket_nr=198, io_uring_nrs=(425, 426, 427), has_x32=False),
}


class UnsupportedArchitecture(RuntimeError):
    """No seccomp filter is known for this machine's architecture."""


def network_filter(machine: str | None = None) -> bytes:
    """Compile the filter for `machine` (default: this one) to the bytes bubblewrap reads from `--seccomp FD`.

    Raises:
        UnsupportedArchitecture: for machines other than x86_64 and aarch64.
    """
    name = machine or platform.machine()
    arch = _ARCHES.get(name)
    if arch is None:
        raise UnsupportedArchitecture(f"no seccomp network filter for architecture {name!r}")
    prog = _Program()
    prog.load(_OFF_ARCH)
    prog.jump_if(_JEQ_K, arch.audit_arch, then="check_nr", otherwise="kill")
    prog.label("check_nr")
    prog.load(_OFF_NR)
    if arch.has_x32:
        prog.jump_if(_JGE_K, _X32_SYSCALL_BIT, then="nosys", otherwise=None)
    for nr in arch.io_uring_nrs:
        prog.jump_if(_JEQ_K, nr, then="nosys", otherwise=None)
    prog.jump_if(_JEQ_K, arch.socket_nr, then=None, otherwise="allow")
    prog.load(_OFF_ARG0)
    prog.jump_if(_JEQ_K, socket.AF_UNIX, then="allow", otherwise="eacces")
    prog.label("allow")
    prog.ret(_RET_ALLOW)
    prog.label("eacces")
    prog.ret(_RET_ERRNO | errno.EACCES)
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
