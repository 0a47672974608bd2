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

# console.log keeps lines while `__room` (characters: half the output cap) lasts, then drops the rest
_PRELUDE = """
var __logs = [], __room = 0;
var console = {log: function() {
  if (__room <= 0 || __logs.length >= 1000) return;
  var line = Array.prototype.map.call(arguments, String).join(' ').slice(0, __room);
  __room -= line.length;
  __logs.push(line);
}};
console.info = console.warn = console.error = console.debug = console.log;
"""


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
        ctx.eval(_PRELUDE + f"__room = {limits.output_bytes // 2}; var input = {json.dumps(input_json)};")
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
        logs: list[str] = json.loads(str(ctx.eval("JSON.stringify(__logs)")))
    finally:
        ctx.close()
    room = limits.output_bytes - sum(len(line) for line in logs)
    if isinstance(value, str) and len(value) > room:
        raise ToolError(
            ErrorCode.QUOTA_EXCEEDED,
            f"the result is {len(value)} characters as JSON, over what is left of the "
            f"{limits.output_bytes}-character cap after the logs ({max(room, 0)})",
            suggestion="Return a summary (counts, a sample) rather than everything.",
        )
    # JSON.stringify gives undefined (not a string) for undefined and functions: no result
    return {"result": json.loads(value) if isinstance(value, str) else None, "logs": logs}


def _settle(ctx: Any) -> None:
    """Queue a no-op behind a cancelled eval, so its late callback lands before `close()` (else it warns)."""
    with contextlib.suppress(Exception):  # the isolate may be beyond use after OOM; close() still works
        ctx.eval("0")
