"""js.exec's engine: QuickJS (the `quickjs-ng` package, the `tether[js]` extra) in sandboxed worker processes.

In tether's own process a script could hold memory outside any JavaScript heap limit and keep a core spinning
after its call was answered TIMEOUT; so scripts run in workers (`_jspool`, `_jsworker`), each in the OS
sandbox with its cgroup's memory limit (and RLIMIT_AS where none can be made). A call that passes its
deadline, or is cancelled, kills its worker, whole: `TIMEOUT` means stopped. Every call gets a fresh QuickJS
context (and runtime, with its memory limit, typed arrays included), made ahead by its worker.

What comes back is checked here, whatever the worker says: the logs and the result together never pass the
output cap, an error message never passes `_ERROR_CHARS`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tether.exceptions import ToolError
from tether.sandbox import SandboxLimits
from tether.types import ErrorCode

from ._jspool import BadFrame, Unasked, memory_bytes, pool

__all__ = ["run_js"]

_ERROR_CHARS = 2000
_ENCODE = json.JSONEncoder(allow_nan=False).encode
"""The request as JSON: NaN and Infinity are not JSON; one encoder, not one a call."""
_FRAME_SLACK = 64 * 1024


async def run_js(code: str, input_json: Any, *, timeout_s: float, limits: SandboxLimits) -> dict[str, Any]:
    """Evaluate `code` with `input` bound, in a pooled worker; returns {result, logs}.

    A promise the script returns is awaited (its microtasks run to the last); console.log lines come back
    while half the output cap lasts, the result within what is left of it.
    """
    request = _request(code, input_json, limits)
    loop = asyncio.get_running_loop()
    wait_until = loop.time() + timeout_s  # for a worker, when all are busy
    workers = pool(limits)
    # the answer's bound: JSON escapes a character in at most 6, UTF-8 takes at most 3 bytes for each
    max_bytes = 6 * limits.output_bytes + _FRAME_SLACK
    while True:
        worker = await workers.take(wait_until)
        try:
            # the script's time starts when a worker has it (starting one is tether's time, not the script's)
            answer, size = await worker.ask(request, loop.time() + timeout_s, max_bytes)
        except TimeoutError:
            workers.discard(worker)
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"stopped after {timeout_s:g} s; its worker process was killed",
                suggestion="Make it faster or do less per call.",
            ) from None
        except EOFError:
            oom = worker.process.oom_killed()
            workers.discard(worker)
            if worker.served and not oom:
                continue  # it died idle (e.g. finishing off a previous call): ask a fresh one
            if oom:
                raise _out_of_memory(limits) from None
            raise ToolError(
                ErrorCode.INTERNAL, "the JavaScript worker died during the call", recoverable=False
            ) from None
        except Unasked:
            workers.discard(worker)
            if worker.served:
                continue  # it spoke after its last answer: never trusted again, the call goes to a fresh one
            raise ToolError(
                ErrorCode.INTERNAL,
                "the JavaScript worker answered another request; it was killed",
                recoverable=False,
            ) from None
        except BadFrame as exc:
            workers.discard(worker)
            raise ToolError(
                ErrorCode.INTERNAL,
                f"the JavaScript worker sent {exc}; it was killed",
                recoverable=False,
            ) from None
        except BaseException:  # the call was cancelled: its script must not run on
            workers.discard(worker)
            raise
        break
    workers.give_back(worker)
    return _result(answer, size, limits)


def _request(code: str, input_json: Any, limits: SandboxLimits) -> bytes:
    try:
        return _ENCODE(
            {"code": code, "input": input_json, "logs": limits.output_bytes // 2, "cap": limits.output_bytes}
        ).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        raise ToolError(
            ErrorCode.INVALID_ARGS,
            f"input_json is not JSON: {str(exc)[:200]}",
            suggestion="Pass plain JSON: objects, arrays, strings, finite numbers, true, false, null.",
        ) from None


def _result(answer: dict[str, Any], size_bytes: int, limits: SandboxLimits) -> dict[str, Any]:
    if answer.get("oom") is True:
        raise _out_of_memory(limits)
    error = answer.get("error")
    if error is not None:
        message = str(error)[:_ERROR_CHARS]
        if message.startswith("InternalError: out of memory"):
            raise _out_of_memory(limits)
        raise ToolError(ErrorCode.INVALID_ARGS, f"JavaScript error: {message}", suggestion="Fix the script.")
    logs = _capped_logs(answer.get("logs"), limits.output_bytes // 2)
    room = limits.output_bytes - sum(len(line) for line in logs)
    size = answer.get("too_big")
    value = answer.get("value")
    # an answer no longer than the cap holds a result within it; a longer one is measured here (the worker's
    # own check is the script's engine's: tether does not rely on it)
    if (
        size is None
        and size_bytes > limits.output_bytes
        and len(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) > room
    ):
        size = "over"
    if size is not None:
        shown = f"{size} characters" if isinstance(size, int) else "too long"
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"the result is {shown} as JSON, over what is left of the "
            f"{limits.output_bytes}-character cap after the logs ({max(room, 0)})",
            suggestion="Return a summary (counts, a sample) rather than everything.",
        )
    return {"result": value, "logs": logs}


def _capped_logs(raw: Any, room: int) -> list[str]:
    logs: list[str] = []
    if not isinstance(raw, list):
        return logs
    for line in raw:  # pyright: ignore[reportUnknownVariableType]  # the worker's JSON
        if room <= 0:
            break
        text = str(line)[:room]  # pyright: ignore[reportUnknownArgumentType]
        room -= len(text)
        logs.append(text)
    return logs


def _out_of_memory(limits: SandboxLimits) -> ToolError:
    return ToolError(
        ErrorCode.QUOTA_EXCEEDED,
        f"the script ran out of memory ({memory_bytes(limits) // 2**20} MiB for JavaScript, "
        f"{limits.memory_bytes // 2**20} MiB in all)",
        suggestion="Use less memory.",
    )
