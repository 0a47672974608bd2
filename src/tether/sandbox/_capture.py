"""Feed stdin and capture capped stdout/stderr of a child until it exits, times out or floods."""

from __future__ import annotations

import os
import selectors
import time
from dataclasses import dataclass, field
from typing import IO, Protocol

__all__ = ["Captured", "capture"]


@dataclass
class Captured:
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    timed_out: bool = False
    truncated: bool = False


class _Piped(Protocol):
    @property
    def stdin(self) -> IO[bytes] | None: ...
    @property
    def stdout(self) -> IO[bytes] | None: ...
    @property
    def stderr(self) -> IO[bytes] | None: ...


def capture(proc: _Piped, stdin: bytes | None, *, deadline: float, cap: int) -> Captured:
    """Pump the pipes until both outputs close, `deadline` (monotonic) passes or the outputs together pass
    `cap` (a run never returns more than `cap` bytes, whichever channel it floods).

    Returns with the pipes still open when the run must be killed (`timed_out` or `truncated`); the caller
    kills the process tree, then closes them.
    """
    out = Captured()
    buffers = {proc.stdout: out.stdout, proc.stderr: out.stderr}
    pending = memoryview(stdin or b"")
    with selectors.DefaultSelector() as sel:
        for stream in buffers:
            assert stream is not None
            sel.register(stream, selectors.EVENT_READ)
        if proc.stdin is not None:
            if pending:
                os.set_blocking(proc.stdin.fileno(), False)
                sel.register(proc.stdin, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                out.timed_out = True
                return out
            for key, _ in sel.select(remaining):
                stream = key.fileobj
                if stream is proc.stdin:
                    assert proc.stdin is not None
                    try:
                        pending = pending[os.write(proc.stdin.fileno(), pending[:65536]) :]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:  # the child stopped reading; it still gets to finish
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(stream)
                        proc.stdin.close()
                    continue
                data = os.read(key.fd, 65536)
                if not data:
                    sel.unregister(stream)
                    continue
                buf = buffers[stream]  # pyright: ignore[reportArgumentType]  # fileobj is one of the pipes
                buf += data
                if (over := len(out.stdout) + len(out.stderr) - cap) > 0:
                    del buf[len(buf) - over :]
                    out.truncated = True
                    return out
    return out
