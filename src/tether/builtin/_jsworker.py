"""js.exec's worker, run by `python -I -S -c` inside the sandbox (this file's text; tether never imports it).

Frames both ways are a 4-byte big-endian length and that many bytes of JSON. The worker answers one frame
with one frame: a request `{"code", "input", "logs", "cap"}` with `{"value"?, "too_big"?, "error"?,
"logs"}`. Every request gets a fresh QuickJS runtime and context (the `quickjs-ng` package, a C extension
that imports nothing else); the next one is made while the worker waits, so a call costs an eval. The
context's memory limit covers everything the script allocates, typed arrays and ArrayBuffers included.

The worker does not police time: tether kills the whole sandbox when a call passes its deadline, which stops
any loop, microtask loops included. It retires (exits after answering) before RLIMIT_CPU would kill it
mid-call. The JavaScript that serves a request is a closure made before the script runs, holding the
builtins it uses, so a script cannot change how its answer is capped or framed; tether checks it anyway.

argv: the directory holding `_quickjs`, the memory limit in bytes, the CPU seconds after which to retire.
"""

import os
import select
import sys
import time
from typing import Any

sys.path.insert(0, sys.argv[1])

quickjs = __import__("_quickjs")  # after the path; a C extension without type stubs

MEMORY_BYTES = int(sys.argv[2])
RETIRE_CPU_S = float(sys.argv[3])
READY = 3
"""Contexts made ahead."""
REST_S = 0.001
"""How long the worker rests after an answer before housekeeping."""

SERVE = r"""(function () {
  "use strict";
  const stringify = JSON.stringify, parse = JSON.parse, toText = String, apply = Reflect.apply;
  const slice = String.prototype.slice, indexOf = String.prototype.indexOf, join = Array.prototype.join;
  const then = Promise.prototype.then, isPromise = (v) => v instanceof Promise;
  const define = Object.defineProperty, evaluate = eval, global = globalThis;
  const MAX_LINES = 1000, MAX_ERROR = 2000;
  function text(value) {
    try { return toText(value); } catch (e) { return "(a value that cannot be shown as text)"; }
  }
  function cut(s, n) { return s.length > n ? apply(slice, s, [0, n]) : s; }
  function described(error) {
    let message = text(error);
    try {
      const stack = error !== null && typeof error === "object" ? error.stack : undefined;
      if (typeof stack === "string" && stack) {
        const own = apply(indexOf, stack, ["    at eval (native)"]);  // the frames below are this function's
        message += "\n" + cut(own < 0 ? stack : apply(slice, stack, [0, own]), MAX_ERROR);
      }
    } catch (e) { /* a getter that throws: the message alone */ }
    return cut(message, MAX_ERROR);
  }
  function bigintsAsText(key, value) { return typeof value === "bigint" ? toText(value) : value; }
  // console.log keeps lines while `left` (characters) lasts, as JSON text; made before any request comes
  let left = 0, lines = 0, used = 0, logs = "";
  function log() {
    let line = "";
    for (let i = 0; i < arguments.length && line.length < left; i++) {
      line += (i ? " " : "") + cut(text(arguments[i]), left);
    }
    if (left <= 0 || lines >= MAX_LINES) return;
    line = cut(line, left);
    left -= line.length;
    used += line.length;
    logs += (lines++ ? "," : "") + stringify(line);
  }
  const console = { log, info: log, warn: log, error: log, debug: log };
  define(global, "console", { value: console, writable: true, configurable: true });
  return function serve(request) {
    const { code, input, logs: logRoom, cap } = parse(request);
    left = logRoom;
    define(global, "input", { value: input, writable: true, configurable: true });
    let state = "done", value, error;
    try {
      value = evaluate(code);
      if (isPromise(value)) {
        state = "pending";
        apply(then, value, [(v) => { state = "done"; value = v; }, (e) => { state = "failed"; error = e; }]);
      }
    } catch (e) {
      state = "failed";
      error = e;
    }
    return function finish() {
      let head;
      if (state === "pending") {
        head = '"error":' + stringify("the promise it returned never settled");
      } else if (state === "failed") {
        head = '"error":' + stringify(described(error));
      } else {
        try {
          const json = stringify(value, bigintsAsText);
          if (json === undefined) head = '"value":null';
          else if (json.length > cap - used) head = '"too_big":' + json.length;
          else head = '"value":' + json;
        } catch (e) {
          head = '"error":' + stringify(described(e));
        }
      }
      return apply(join, ["{", head, ',"logs":[', logs, "]}"], [""]);  // flat: the extension cannot read a rope
    };
  };
})()"""


def fresh() -> tuple[Any, Any]:
    """A new runtime and context with its memory limit, and its serve function, made before any script."""
    context = quickjs.Context()
    context.set_memory_limit(MEMORY_BYTES)
    return context, context.eval(SERVE)


def answer(context: Any, serve: Any, request: str) -> str:
    try:
        finish = serve(request)
        while context.execute_pending_job():  # the microtasks it queued, to the last (or until killed)
            pass
        return str(finish())
    except quickjs.JSException as exc:  # what escaped the script's own catch: running out of memory, mostly
        if "out of memory" in str(exc):
            return '{"oom":true,"logs":[]}'
        return '{"error":"the engine stopped the script (' + type(exc).__name__ + ')","logs":[]}'
    except Exception as exc:  # the extension could not convert something: the worker lives on
        return '{"error":"the engine could not answer (' + type(exc).__name__ + ')","logs":[]}'


def read_request() -> tuple[bytes, str]:
    """One request frame, in as few reads as it arrives in: its nonce (echoed in the answer) and its body."""
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        chunk = os.read(0, 1 << 16)
        if not chunk:
            sys.exit(0)  # tether closed the pipe
        data += chunk
    return data[4:12], data[12:].decode()  # 8 bytes of nonce: `_jspool._NONCE`


def send(body: bytes) -> None:
    data = len(body).to_bytes(4, "big") + body
    while data:
        data = data[os.write(1, data) :]


def main() -> None:
    ready = [fresh()]
    spent: list[tuple[Any, Any]] = []
    """The last request's context: freed while idle (freeing a runtime costs about as much as making one)."""
    send(b'{"ready":true}')
    while True:
        # housekeeping only while no request waits, and after a rest: done at once, it keeps the CPU from the
        # tether thread about to read the answer (whose wake-up the scheduler does not let preempt it)
        if not select.select([0], [], [], REST_S)[0]:
            spent.clear()
            while len(ready) < READY and not select.select([0], [], [], 0)[0]:
                ready.append(fresh())
        nonce, request = read_request()
        spent.clear()  # in a burst, freed now: one script's memory at a time, within the sandbox's
        context, serve = ready.pop() if ready else fresh()
        send(nonce + answer(context, serve, request).encode())
        spent.append((context, serve))
        del context, serve
        if time.process_time() > RETIRE_CPU_S:
            return


main()
