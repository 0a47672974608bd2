"""The typed limits a sandboxed run is held to, and what a run returns."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["MAX_COMMAND_BYTES", "BadCommand", "SandboxLimits", "SandboxResult", "command_bytes"]

_MiB = 1024 * 1024

MAX_COMMAND_BYTES = 128 * 1024
"""The most a run's argv and environment may hold together: the kernel's bound on one argument
(MAX_ARG_STRLEN), and within what one message to a zygote's spare or the fork server can carry."""


class BadCommand(ValueError):
    """A run's argv or environment cannot be given to a program (a NUL byte, text that is not Unicode, more
    than `MAX_COMMAND_BYTES`): refused before anything starts."""


def command_bytes(argv: Sequence[str], env: Mapping[str, str]) -> int:
    """What `argv` and `env` take in a program's memory.

    Raises:
        BadCommand: a string holds a NUL byte or a lone surrogate, or they pass `MAX_COMMAND_BYTES`.
    """
    size = 0
    for what, text in (
        *(("an argument", a) for a in argv),
        *(("the environment", f"{k}={v}") for k, v in env.items()),
    ):
        if "\x00" in text:
            raise BadCommand(f"{what} holds a NUL byte, which no program can be given")
        try:
            size += len(os.fsencode(text)) + 1
        except UnicodeEncodeError as exc:
            raise BadCommand(
                f"{what} is not Unicode text (a lone surrogate, {text[exc.start]!a}, at character {exc.start})"
            ) from None
    if size > MAX_COMMAND_BYTES:
        raise BadCommand(
            f"the command line and environment are {size} bytes, over the {MAX_COMMAND_BYTES} a sandboxed "
            "program can be given"
        )
    return size


@dataclass(frozen=True, kw_only=True, slots=True)
class SandboxLimits:
    """Resource limits of one sandboxed run; every field has a safe default."""

    address_space_bytes: int = 1024 * _MiB
    """RLIMIT_AS: virtual memory of each process; a memory bomb fails to allocate past it."""
    cpu_seconds: int = 30
    """RLIMIT_CPU: CPU time of each process (SIGXCPU, then SIGKILL)."""
    file_size_bytes: int = 64 * _MiB
    """RLIMIT_FSIZE: the largest file a process may write (EFBIG / SIGXFSZ past it)."""
    open_files: int = 256
    """RLIMIT_NOFILE: open file descriptors per process."""
    processes: int = 128
    """Processes and threads of the run's tree (the cgroup's pids.max); stops fork bombs. Without a cgroup
    it is RLIMIT_NPROC, which the kernel counts per uid, so sandboxes under one uid then share it."""
    output_bytes: int = 256 * 1024
    """stdout and stderr captured, together; past it the run is killed and marked truncated."""
    tmp_bytes: int = 64 * _MiB
    """Size of the private `/tmp` tmpfs, and of `/dev/shm`'s."""
    workspace_bytes: int = 256 * _MiB
    """Size of `/workspace` when it is a private tmpfs (`Sandbox(None)`, e.g. python.exec's scratch), and the
    disk quota of one run's changes to a host workspace (on both start paths, where the kernel can lay an
    overlay; see docs/sandbox.md)."""
    memory_bytes: int = 1024 * _MiB
    """Memory of the whole process tree, tmpfs pages included (a cgroup, where one can be made); past it
    the kernel's OOM killer ends the run and it is marked `oom_killed`."""
    cpu_cores: float = 1.0
    """CPU bandwidth of the whole tree, in cores (a cgroup's CPU quota, where one can be made)."""
    timeout_s: float = 30.0
    """Wall-clock time before the whole process tree is killed (the default when `run` is given none)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SandboxResult:
    """The outcome of one sandboxed run."""

    stdout: str
    stderr: str
    exit_code: int
    """The command's exit status; 128+N when signal N killed it; -9 when tether killed the sandbox."""
    duration_ms: int
    timed_out: bool = False
    """The run hit its timeout and the whole process tree was killed."""
    truncated: bool = False
    """Output passed `SandboxLimits.output_bytes`; what was captured is kept and the run was killed."""
    sandboxed: bool = True
    """False only when the caller opted out of the sandbox explicitly."""
    oom_killed: bool = False
    """The tree passed `SandboxLimits.memory_bytes` and the kernel's OOM killer ended (part of) it."""
    quota_exceeded: str | None = None
    """Why the run's changes to a host workspace passed `SandboxLimits.workspace_bytes` (then none of them
    reached the host), or `None`."""
