"""Process isolation: run a tool function in a child process that a timeout or cancellation kills.

The child leads a new process group; on timeout or cancellation the whole group gets SIGKILL, so a
`while True:` tool, and anything it started, stops. The function must be importable by module and
qualified name, and its arguments and result picklable.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from tether.exceptions import NeedsInput, ToolCrashed, ToolError, UserError

__all__ = ["run_in_process"]

_WORKER = str(Path(__file__).with_name("_worker.py"))


async def run_in_process(function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Call `function(**kwargs)` in a child process and return its result, re-raising tool signals."""
    module, qualname = function.__module__, function.__qualname__
    if module == "__main__" or "<locals>" in qualname:
        raise UserError(
            f"{qualname} asks for process isolation, so it must be defined at the top level of an importable "
            "module (not in __main__ or inside a function)."
        )
    payload = pickle.dumps({"sys_path": sys.path, "module": module, "qualname": qualname, "kwargs": kwargs})
    process = await anyio.open_process(
        [sys.executable, _WORKER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,
        start_new_session=True,
    )
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        await process.stdin.send(payload)
        await process.stdin.aclose()
        chunks = [chunk async for chunk in process.stdout]
        code = await process.wait()
    except BaseException:
        _kill_group(process.pid)
        with anyio.CancelScope(shield=True):
            await process.wait()
        raise
    _kill_group(process.pid)  # whatever the tool left running in its group goes with it
    if not chunks:
        raise ToolCrashed("ChildProcessError", f"the tool's process exited with code {code} without replying")
    return _unpack(pickle.loads(b"".join(chunks)))


def _unpack(reply: tuple[Any, ...]) -> Any:
    match reply:
        case ("ok", value):
            return value
        case ("tool_error", code, message, recoverable, suggestion):
            raise ToolError(code, message, recoverable=recoverable, suggestion=suggestion)
        case ("needs", needs):
            raise NeedsInput(**needs)
        case (_, type_name, traceback):
            raise ToolCrashed(type_name, traceback)
        case _:
            raise ToolCrashed("ProtocolError", f"unexpected reply from the tool's process: {reply!r}")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
