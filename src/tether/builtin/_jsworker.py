"""js.exec's worker, run by `python -I -c` inside the sandbox (this file's text; tether never imports it).

It serves one request per line on stdin with one answer per line on stdout, each JSON. Every request gets a
fresh V8 isolate (mini-racer); a few are made ahead, while no request waits, so a call costs an eval, not
an isolate's start. The worker does not police time: tether kills the whole sandbox when a call passes its
deadline, which stops any loop, microtasks included. Memory: V8's heap limit per isolate, and the
sandbox's cgroup for what lives outside the heap (typed arrays).

argv: the directory holding `py_mini_racer`, the heap limit in bytes.
"""

import contextlib
import json
import select
import sys
from typing import Any

sys.path.insert(0, sys.argv[1])

from py_mini_racer import JSEvalException, JSOOMException, MiniRacer  # after the path

HEAP_BYTES = int(sys.argv[2])
READY = 3
"""Isolates made ahead."""

# console.log keeps lines while `__room` (characters, set per call) lasts, then drops the rest
PRELUDE = """
var __logs = [], __room = 0;
var console = {log: function() {
  if (__room <= 0 || __logs.length >= 1000) return;
  var line = Array.prototype.map.call(arguments, String).join(' ').slice(0, __room);
  __room -= line.length;
  __logs.push(line);
}};
console.info = console.warn = console.error = console.debug = console.log;
"""


def fresh() -> Any:
    ctx = MiniRacer()
    ctx.set_hard_memory_limit(HEAP_BYTES)
    ctx.eval(PRELUDE)
    return ctx


def answer(request: dict[str, Any], ctx: Any) -> dict[str, Any]:
    # one eval a call: bind the input, run the code at global scope, return [result as JSON, logs]
    # (JSON.stringify gives undefined for undefined and functions, which the array turns into null)
    source = (
        f"__room = {int(request['room'])}; var input = {json.dumps(request['input'])};"
        f"JSON.stringify([JSON.stringify((0, eval)({json.dumps(request['code'])})), __logs])"
    )
    try:
        value, logs = json.loads(str(ctx.eval(source)))
    except JSOOMException:
        return {"error": "oom"}
    except JSEvalException as exc:
        return {"error": "eval", "message": str(exc)}
    return {"result": value, "logs": logs}


def main() -> None:
    ready = [fresh()]
    out = sys.stdout
    sys.stdout.write('{"ready": true}\n')
    sys.stdout.flush()
    while True:
        # make isolates ahead only while no request waits
        while len(ready) < READY and not select.select([sys.stdin], [], [], 0)[0]:
            ready.append(fresh())
        line = sys.stdin.readline()
        if not line:
            return
        ctx = ready.pop(0) if ready else fresh()
        out.write(json.dumps(answer(json.loads(line), ctx)) + "\n")
        out.flush()
        with contextlib.suppress(
            Exception
        ):  # an isolate past its heap limit may refuse; the process lives on
            ctx.close()


if __name__ == "__main__":
    main()
