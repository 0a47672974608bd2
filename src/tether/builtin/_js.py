"""js.exec's engine: an embedded V8 isolate (mini-racer, the `tether[js]` extra) with time and memory limits.

V8 alone has no file system, network or process API; a fresh context per call keeps calls apart.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from tether.exceptions import ToolError
from tether.sandbox import Limits
from tether.types import ErrorCode

__all__ = ["run_js"]

_PRELUDE = """
var __logs = [];
var console = {log: function() { __logs.push(Array.prototype.map.call(arguments, String).join(' ')); }};
console.info = console.warn = console.error = console.debug = console.log;
"""
_MAX_LOGS = 1000


def run_js(code: str, input_json: Any, *, timeout_s: float, limits: Limits) -> dict[str, Any]:
    """Evaluate `code` with `input` bound; returns {result, logs}."""
    try:
        from py_mini_racer import (
            JSEvalException,
            JSOOMException,
            JSTimeoutException,
            MiniRacer,  # optional extra, imported on use
        )
    except ImportError:
        raise ToolError(
            "JS_UNAVAILABLE",
            "the JavaScript engine is not installed",
            recoverable=False,
            suggestion="Tell the user: pip install 'tether[js]' to enable js.exec.",
        ) from None
    ctx = MiniRacer()
    try:
        ctx.set_hard_memory_limit(min(limits.address_space_bytes, 256 * 1024 * 1024))
        ctx.eval(_PRELUDE + f"var input = {json.dumps(input_json)};")
        try:
            value = ctx.eval(f"JSON.stringify((0, eval)({json.dumps(code)}))", timeout_sec=timeout_s)
        except JSTimeoutException:
            _settle(ctx)
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"stopped after {timeout_s:g} s",
                suggestion="Make it faster or do less per call.",
            ) from None
        except JSOOMException:
            _settle(ctx)
            raise ToolError(
                ErrorCode.QUOTA_EXCEEDED, "the script ran out of memory", suggestion="Use less memory."
            ) from None
        except JSEvalException as exc:
            raise ToolError(
                ErrorCode.INVALID_ARGS, f"JavaScript error: {exc}", suggestion="Fix the script."
            ) from None
        logs = json.loads(str(ctx.eval(f"JSON.stringify(__logs.slice(0, {_MAX_LOGS}))")))
    finally:
        ctx.close()
    # JSON.stringify gives undefined (not a string) for undefined and functions: no result
    return {"result": json.loads(value) if isinstance(value, str) else None, "logs": logs}


def _settle(ctx: Any) -> None:
    """Queue a no-op behind a cancelled eval, so its late callback lands before `close()` (else it warns)."""
    with contextlib.suppress(Exception):  # the isolate may be beyond use after OOM; close() still works
        ctx.eval("0")
