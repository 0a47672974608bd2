"""The child side of process isolation: run one tool function and write back a pickled reply.

Started as a script (`python .../_worker.py`) so that it imports nothing of tether's but the exceptions and
the tool's own module. Reads `{sys_path, module, qualname, kwargs}` pickled on stdin; writes one of
`("ok", value)`, `("tool_error", code, message, recoverable, suggestion)`, `("needs", needs)` or
`("exception", type_name, traceback)` pickled on the original stdout. The tool's own prints go to stderr.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import pickle
import sys
import traceback
from typing import Any


def _reply(payload: dict[str, Any]) -> tuple[Any, ...]:
    from tether.exceptions import NeedsInput, ToolError

    try:
        target: Any = importlib.import_module(payload["module"])
        for part in payload["qualname"].split("."):
            target = getattr(target, part)
        function = getattr(target, "function", None) or target  # a `Tool` wraps the function
        result = function(**payload["kwargs"])
        if inspect.iscoroutine(result):
            result = asyncio.run(result)
        return ("ok", result)
    except ToolError as e:
        return ("tool_error", e.code, e.message, e.recoverable, e.suggestion)
    except NeedsInput as e:
        return ("needs", e.needs)
    except BaseException as e:
        return ("exception", type(e).__name__, traceback.format_exc())


def main() -> None:
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    payload: dict[str, Any] = pickle.load(sys.stdin.buffer)
    sys.path[:] = payload["sys_path"]
    reply = _reply(payload)
    try:
        data = pickle.dumps(reply)
    except Exception:
        data = pickle.dumps(("exception", "PicklingError", traceback.format_exc()))
    out.write(data)
    out.flush()


if __name__ == "__main__":
    main()
