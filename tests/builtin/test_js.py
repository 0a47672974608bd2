"""js.exec's engine (QuickJS in sandboxed workers), attacked: a script that fights its caps, a cancelled call,
and a worker that lies (a script that broke the engine speaks through it)."""

import asyncio
import contextlib
import dataclasses
import json
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.builtin import _js, _jspool
from tether.builtin._js import run_js
from tether.builtin.exec import exec_pack
from tether.exceptions import ToolError
from tether.execution import Executor
from tether.sandbox import (
    Sandbox,
    SandboxLimits,
    _zygote,  # runs on both start paths
)
from tether.types import OkEnvelope, ToolCall

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.usefixtures("bwrap_installed"),  # skips without bubblewrap, fails under CI
]

pytest.importorskip("_quickjs", reason="js.exec needs the tether[js] extra (quickjs-ng)")

_MiB = 1024 * 1024
LIMITS = SandboxLimits(processes=32, output_bytes=32 * 1024, memory_bytes=256 * _MiB, timeout_s=20)


async def js(
    code: str, input_json: Any = None, *, timeout_s: float = 10, limits: SandboxLimits = LIMITS
) -> Any:
    return (await run_js(code, input_json, timeout_s=timeout_s, limits=limits))["result"]


async def js_error(
    code: str, input_json: Any = None, *, timeout_s: float = 10, limits: SandboxLimits = LIMITS
) -> ToolError:
    with pytest.raises(ToolError) as raised:
        await run_js(code, input_json, timeout_s=timeout_s, limits=limits)
    return raised.value


def _worker_pids() -> set[int]:
    pids: set[int] = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if b"js.exec's worker" in Path("/proc", pid, "cmdline").read_bytes():
                    pids.add(int(pid))
            except OSError:
                continue
    return pids


def _cpu_s(pids: set[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            fields = Path("/proc", str(pid), "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


# ----------------------------------------------------------------------------- what a user relies on


async def test_modern_javascript_works_and_a_returned_promise_is_awaited() -> None:
    code = """(async () => {
      const sorted = [3, 1, 2].toSorted();
      const groups = Object.groupBy(input.words, (w) => w.length);
      const bytes = new Uint8Array([1, 2, 3]).map((b) => b * 2);
      await null;
      return {sorted, groups, bytes: Array.from(bytes), big: 2n ** 70n, last: sorted.at(-1), parsed: JSON.parse('[1]')};
    })()"""
    assert await js(code, {"words": ["a", "bb", "c"]}) == {
        "sorted": [1, 2, 3],
        "groups": {"1": ["a", "c"], "2": ["bb"]},
        "bytes": [2, 4, 6],
        "big": "1180591620717411303424",  # a BigInt comes back as its digits (JSON has no BigInt)
        "last": 3,
        "parsed": [1],
    }


async def test_logs_from_microtasks_come_back_and_a_rejected_promise_is_an_error() -> None:
    answer = await run_js(
        "Promise.resolve().then(() => console.log('later')); console.log('now'); 1",
        None,
        timeout_s=10,
        limits=LIMITS,
    )
    assert answer == {"result": 1, "logs": ["now", "later"]}
    error = await js_error("(async () => { throw new RangeError('no') })()")
    assert error.code == "INVALID_ARGS"
    assert error.message.startswith("JavaScript error: RangeError: no")
    assert (await js_error("new Promise(() => {})")).message == (
        "JavaScript error: the promise it returned never settled"
    )


async def test_each_call_gets_a_fresh_context() -> None:
    await js("globalThis.leak = 'secret'; Object.prototype.polluted = 1; JSON.stringify = () => 'x'; 1")
    assert await js("[typeof leak, ({}).polluted, JSON.stringify([1])]") == ["undefined", None, "[1]"]


async def test_proto_keys_stay_own_properties_both_ways() -> None:
    # bound as an object literal, {"__proto__": ...} would set the prototype instead
    seen = await js(
        "[Object.keys(input), input.admin, input.__proto__.admin]", {"__proto__": {"admin": True}}
    )
    assert seen == [["__proto__"], None, True]
    assert await js('JSON.parse(\'{"__proto__": {"x": 1}, "a": 2}\')') == {"__proto__": {"x": 1}, "a": 2}
    assert await js("({['__proto__']: 5})") == {"__proto__": 5}


@pytest.mark.parametrize(
    "input_json",
    [float("nan"), float("inf"), {1j}, b"bytes", {"deep": object()}],
    ids=["nan", "infinity", "set", "bytes", "object"],
)
async def test_input_that_is_not_json_is_invalid_args(input_json: Any) -> None:
    error = await js_error("input", input_json)
    assert error.code == "INVALID_ARGS"
    assert error.message.startswith("input_json is not JSON: ")


async def test_circular_or_bottomless_input_is_invalid_args() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert (await js_error("input", loop)).code == "INVALID_ARGS"
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert (await js_error("input", deep)).code == "INVALID_ARGS"


async def test_a_short_timeout_is_the_scripts_own_not_the_workers_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slow_start = "import time\ntime.sleep(0.6)\n" + _jspool._worker_source()  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(_jspool, "_worker_source", lambda: slow_start)
    limits = dataclasses.replace(LIMITS, output_bytes=LIMITS.output_bytes + 7)  # a new pool: a cold start
    assert await js("1 + 1", timeout_s=0.3, limits=limits) == 2
    _jspool.pool(limits).close()


# -------------------------------------------------------------------------------- caps, every channel


async def test_a_huge_thrown_message_is_capped() -> None:
    error = await js_error("throw 'x'.repeat(5e6)")
    assert error.code == "INVALID_ARGS"
    assert len(error.message) <= len("JavaScript error: ") + _js._ERROR_CHARS  # pyright: ignore[reportPrivateUsage]


async def test_thrown_values_that_fight_being_shown_still_answer() -> None:
    assert (await js_error("throw Object.create(null)")).message == (
        "JavaScript error: (a value that cannot be shown as text)"
    )
    hostile = "throw {toString() { throw 1 }, get stack() { throw 2 }}"
    assert (await js_error(hostile)).message == "JavaScript error: (a value that cannot be shown as text)"


async def test_logs_are_capped_in_lines_and_characters() -> None:
    many = await run_js("for (let i = 0; i < 5000; i++) console.log(i); 1", None, timeout_s=10, limits=LIMITS)
    assert len(many["logs"]) == 1000
    huge = await run_js("console.log('y'.repeat(1e6), 'z'); 2", None, timeout_s=10, limits=LIMITS)
    assert huge["logs"] == ["y" * (LIMITS.output_bytes // 2)]
    assert huge["result"] == 2


async def test_a_script_cannot_lift_its_caps_by_changing_builtins() -> None:
    code = """
      String.prototype.slice = function () { return this + this; };
      Array.prototype.join = () => 'x'.repeat(1e6);
      JSON.stringify = () => 'x'.repeat(1e6);
      Object.defineProperty(Array.prototype, '0', {set() { throw 1 }});
      for (let i = 0; i < 100; i++) console.log('w'.repeat(10000));
      'done'"""
    answer = await run_js(code, None, timeout_s=10, limits=LIMITS)
    assert answer["result"] == "done"
    assert sum(len(line) for line in answer["logs"]) == LIMITS.output_bytes // 2


async def test_a_result_past_what_the_logs_left_is_quota_exceeded() -> None:
    error = await js_error("console.log('l'.repeat(20000)); 'r'.repeat(20000)")
    assert error.code == "QUOTA_EXCEEDED"
    assert error.message == (
        "the result is 20002 characters as JSON, over what is left of the 32768-character cap after the logs (16384)"
    )


# ------------------------------------------------------------------------------------ memory and time


@pytest.mark.parametrize(
    "code",
    [
        "new ArrayBuffer(1024 * 1024 * 1024).byteLength",
        "var held = []; for (;;) held.push(new Float64Array(1 << 20))",
        "var parts = []; for (let i = 0; ; i++) parts.push('x'.repeat(1 << 20) + i)",
    ],
    ids=["array-buffer", "typed-arrays", "string"],
)
async def test_memory_the_script_holds_is_bounded_typed_arrays_included(code: str) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    error = await js_error(code)
    assert error.code == "QUOTA_EXCEEDED"
    assert error.message.startswith("the script ran out of memory (128 MiB for JavaScript")
    assert (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024
    )  # KiB: none of it in tether


@pytest.mark.parametrize(
    "code",
    [
        "for (;;) {}",
        "(async () => { for (;;) { await 0 } })(); 1",
        "(async () => { for (;;) { await 0 } })()",
    ],
    ids=["loop", "microtask-loop", "awaited-microtask-loop"],
)
async def test_a_loop_of_any_kind_is_stopped_at_its_deadline(code: str) -> None:
    error = await js_error(code, timeout_s=0.5)
    assert (error.code, error.message) == ("TIMEOUT", "stopped after 0.5 s; its worker process was killed")
    before = _cpu_s(_worker_pids())
    await asyncio.sleep(0.5)
    assert _cpu_s(_worker_pids()) - before < 0.2  # nothing spins on
    assert await js("1 + 1") == 2


async def test_cancelling_a_call_kills_its_worker() -> None:
    limits = dataclasses.replace(LIMITS, output_bytes=LIMITS.output_bytes + 3)  # a pool of its own
    assert await js("0", limits=limits) == 0  # its worker is up
    before = _worker_pids()
    call = asyncio.ensure_future(js("for (;;) {}", limits=limits))
    await asyncio.sleep(0.3)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert before - _worker_pids()  # the worker the call held, killed at once (its deadline was 10 s away)
    assert await js("2", limits=limits) == 2


async def test_a_spare_replaces_a_worker_killed_after_serving() -> None:
    limits = dataclasses.replace(LIMITS, output_bytes=LIMITS.output_bytes + 11)  # a pool of its own
    workers = _jspool.pool(limits)
    assert await js("0", limits=limits) == 0  # the pool is in use: its one worker is idle again
    assert (await js_error("for (;;) {}", timeout_s=0.3, limits=limits)).code == "TIMEOUT"
    loop = asyncio.get_running_loop()
    give_up = loop.time() + 30
    while not workers._idle:  # pyright: ignore[reportPrivateUsage]  # started in the background, no call waiting
        assert loop.time() < give_up, "no spare worker was started after the kill"
        await asyncio.sleep(0.05)
    spare = workers._idle[0]  # pyright: ignore[reportPrivateUsage]
    assert await js("2", limits=limits) == 2
    assert spare.served  # the next call went to the spare, with no cold start
    workers.close()


async def test_cancelling_the_tool_call_through_the_executor_kills_its_worker(tmp_path: Path) -> None:
    limits = dataclasses.replace(LIMITS, output_bytes=LIMITS.output_bytes + 9)  # a pool of its own
    executor = Executor(exec_pack(tmp_path, enabled=True, limits=limits))

    def call(code: str) -> ToolCall:
        return ToolCall(id="c1", name="js.exec", arguments={"code": code}, why="Sum the rows the user pasted")

    assert await executor.execute(call("0")) == OkEnvelope(data={"result": 0, "logs": []})
    before = _worker_pids()
    running = asyncio.ensure_future(executor.execute(call("for (;;) {}")))
    await asyncio.sleep(0.3)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert before - _worker_pids()  # killed with the call, not left to spin until its 10 s timeout


async def test_a_worker_retires_before_its_cpu_limit_and_calls_go_on() -> None:
    limits = dataclasses.replace(LIMITS, cpu_seconds=1, output_bytes=LIMITS.output_bytes + 5)
    burn = "const t = Date.now(); while (Date.now() - t < 700) {} 'burnt'"
    assert await js(burn, limits=limits) == "burnt"  # past half its RLIMIT_CPU: it exits after answering
    assert await js(burn, limits=limits) == "burnt"  # a new worker, not SIGXCPU mid-call


async def test_at_most_its_cap_of_workers_run_and_later_calls_wait_for_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_jspool, "MAX_WORKERS", 1)
    limits = dataclasses.replace(LIMITS, output_bytes=LIMITS.output_bytes + 1)  # a pool of its own
    busy = asyncio.ensure_future(
        js("const t = Date.now(); while (Date.now() - t < 1500) {} 'done'", limits=limits)
    )
    await asyncio.sleep(0.8)  # the one worker is busy with the first call
    with pytest.raises(ToolError) as waited:
        await run_js("1 + 1", None, timeout_s=0.3, limits=limits)
    assert waited.value.code == "TIMEOUT"
    assert "stayed busy" in waited.value.message
    assert await busy == "done"
    assert await js("1 + 1", limits=limits) == 2  # its worker came free


# ------------------------------------------------------------------------------ a worker that lies

# Each stands in for the worker (same sandbox, same argv): it says it is ready, then answers badly.
_READY = (
    "import os, sys, time\nos.write(1, (14).to_bytes(4, 'big') + b'{\"ready\":true}')\n"
    "nonce = os.read(0, 1 << 20)[4:12]  # each request opens with a nonce its answer must echo\n"
    "def frame(body): os.write(1, (len(body) + 8).to_bytes(4, 'big') + nonce + body)\n"
)
HOSTILE = {
    "huge": "os.write(1, (2**32 - 1).to_bytes(4, 'big') + b'x' * 65536); time.sleep(60)",
    "garbled": "frame(b'\\xff{]nope')",
    "not-an-object": "frame(b'[1,2,3,4]')",
    "deeply-nested": "frame(b'[' * 100000)",
    "silent": "time.sleep(60)",
    "trickle": "os.write(1, (100).to_bytes(4, 'big'))\nfor _ in range(600): os.write(1, b' '); time.sleep(0.1)",
    "short": "os.write(1, (3).to_bytes(4, 'big') + b'abc'); time.sleep(60)",
    "another-nonce": 'nonce = bytes(8); frame(b\'{"value":666,"logs":[]}\'); time.sleep(60)',
}


@pytest.fixture
def hostile_pool(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[SandboxLimits]:
    """Limits whose pool starts the worker given by the test's `source` (a pool of its own)."""
    source: str = request.param
    monkeypatch.setattr(_jspool, "_worker_source", lambda: _READY + source)
    limits = dataclasses.replace(LIMITS, output_bytes=LIMITS.output_bytes + 100 + len(source))
    yield limits
    _jspool.pool(limits).close()


@pytest.mark.parametrize(
    ("hostile_pool", "message"),
    [
        (HOSTILE["huge"], "the JavaScript worker sent a 4294967295-byte answer, over its bound of"),
        (HOSTILE["garbled"], "the JavaScript worker sent an answer that is not JSON; it was killed"),
        (
            HOSTILE["not-an-object"],
            "the JavaScript worker sent an answer that is not a JSON object; it was killed",
        ),
        (HOSTILE["deeply-nested"], "the JavaScript worker sent an answer that is not JSON; it was killed"),
        (
            HOSTILE["short"],
            "the JavaScript worker sent a 3-byte answer, too short to name its request; it was",
        ),
        (HOSTILE["another-nonce"], "the JavaScript worker answered another request; it was killed"),
    ],
    indirect=["hostile_pool"],
    ids=["huge", "garbled", "not-an-object", "deeply-nested", "short", "another-nonce"],
)
async def test_a_bad_frame_kills_the_worker_and_is_internal(
    hostile_pool: SandboxLimits, message: str
) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ToolError) as raised:
        await run_js("1", None, timeout_s=10, limits=hostile_pool)
    assert raised.value.code == "INTERNAL"
    assert raised.value.message.startswith(message)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 16 * 1024  # KiB: never read it whole
    assert _jspool.pool(hostile_pool)._live == 0  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize(
    "hostile_pool", [HOSTILE["silent"], HOSTILE["trickle"]], indirect=True, ids=["silent", "trickle"]
)
async def test_a_worker_that_stalls_is_killed_at_the_deadline(hostile_pool: SandboxLimits) -> None:
    started = asyncio.get_running_loop().time()
    with pytest.raises(ToolError) as raised:
        await run_js("1", None, timeout_s=1.5, limits=hostile_pool)
    assert raised.value.code == "TIMEOUT"
    assert asyncio.get_running_loop().time() - started < 3
    assert _jspool.pool(hostile_pool)._live == 0  # pyright: ignore[reportPrivateUsage]


_FORGED = (
    'frame(b\'{"value":1,"logs":[]}\')\n'
    'frame(b\'{"value":666,"logs":[]}\')  # unasked: meant as the next call\'s answer\n'
    "time.sleep(0.2)\n"
    'frame(b\'{"value":666,"logs":[]}\')  # and again, once the next call was surely sent\n'
    "time.sleep(60)"
)
_OVER_CAP = (
    "import json\nbody = json.dumps({'value': 'v' * 100000, 'logs': ['l' * 5000] * 20}).encode()\nframe(body)"
)

_LOUD = "import json\nbody = json.dumps({'value': 1, 'logs': ['l' * 5000] * 20}).encode()\nframe(body)"


@pytest.mark.parametrize("hostile_pool", [_FORGED], indirect=True)
async def test_bytes_a_worker_sends_unasked_are_never_an_answer(hostile_pool: SandboxLimits) -> None:
    assert await js("1", limits=hostile_pool) == 1
    assert await js("1", limits=hostile_pool) == 1  # a new worker's answer, not the forged 666


@pytest.mark.parametrize("hostile_pool", [_OVER_CAP], indirect=True)
async def test_tether_holds_the_output_cap_whatever_the_worker_claims(hostile_pool: SandboxLimits) -> None:
    with pytest.raises(ToolError) as raised:
        await run_js("1", None, timeout_s=10, limits=hostile_pool)
    assert raised.value.code == "QUOTA_EXCEEDED"
    assert raised.value.message.startswith("the result is too long as JSON, over what is left of the")


@pytest.mark.parametrize("hostile_pool", [_LOUD], indirect=True)
async def test_tether_caps_the_logs_whatever_the_worker_sends(hostile_pool: SandboxLimits) -> None:
    answer = await run_js("1", None, timeout_s=10, limits=hostile_pool)
    assert answer["result"] == 1
    assert sum(len(line) for line in answer["logs"]) == hostile_pool.output_bytes // 2


# ------------------------------------------------------- a worker and a sandboxed run cannot reach each other

_PYTHON = "/usr/bin/python3"
DEFAULT_UID = 65534
"""The uid sandboxed runs take (tether.sandbox's default)."""
_PROBE = """
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
found = {}
for pid in json.loads(sys.argv[1]):
    tried = []
    for what, attempt in (
        ("signal", lambda: os.kill(pid, 0)),
        ("proc", lambda: open(f"/proc/{pid}/environ", "rb").read()),
        ("mem", lambda: open(f"/proc/{pid}/mem", "rb").close()),
    ):
        try:
            attempt()
            tried.append(what + ":reached")
        except OSError as exc:
            tried.append(what + ":" + (os.strerror(exc.errno) if exc.errno else "?"))
    if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
        tried.append("ptrace:reached")
        libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
    else:
        tried.append("ptrace:" + os.strerror(ctypes.get_errno()))
    found[str(pid)] = tried
print(json.dumps(found))
"""


def _uids(pid: int) -> list[int]:
    for line in Path("/proc", str(pid), "status").read_text().splitlines():
        if line.startswith("Uid:"):
            return [int(field) for field in line.split()[1:]]
    return []


def _host_pids(marker: str) -> set[int]:
    found: set[int] = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in Path("/proc", pid, "cmdline").read_bytes():
                    found.add(int(pid))
            except OSError:
                continue
    return found


@pytest.fixture(params=["zygote", "bwrap"])
def sleeping_run(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[set[int]]:
    """A sandboxed run (from a zygote's spare, or one bubblewrap) sleeping in the background: the host
    pids of its processes."""
    monkeypatch.setattr(_zygote, "enabled", request.param == "zygote")
    _zygote.reset()
    marker = f"29.{os.getpid()}{len(request.param)}7"
    box = Sandbox(tmp_path / "ws", limits=LIMITS)
    done = threading.Event()
    thread = threading.Thread(target=lambda: (box.run(["sleep", marker], timeout_s=20), done.set()))
    thread.start()
    for _ in range(500):
        if pids := {p for p in _host_pids(marker) if b"sleep" in Path("/proc", str(p), "comm").read_bytes()}:
            break
        time.sleep(0.01)
    else:
        pytest.fail("the sandboxed run did not start")
    yield pids
    for pid in _host_pids(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    thread.join(20)
    _zygote.reset()


def _parent(pid: int) -> int:
    try:
        return int(Path("/proc", str(pid), "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _ours(pid: int) -> bool:
    """Whether this test process is an ancestor of `pid` (other programs on the machine run workers too)."""
    for _ in range(64):
        pid = _parent(pid)
        if pid == os.getpid():
            return True
        if pid in (0, 1):
            return False
    return False


def _our_workers() -> set[int]:
    """Host pids of this process's js workers (bubblewrap's and the interpreter's)."""
    return {pid for pid in _worker_pids() if _ours(pid) and _uids(pid)}


async def test_workers_and_runs_never_share_a_host_uid(sleeping_run: set[int]) -> None:
    if os.geteuid() != 0:
        pytest.skip(
            "as an ordinary user every sandbox is that user's on the host: namespaces keep them apart"
        )
    assert await js("1 + 1") == 2
    workers = _our_workers()
    assert workers
    assert {uid for pid in workers for uid in _uids(pid)} == {_jspool.WORKER_UID}
    assert {uid for pid in sleeping_run for uid in _uids(pid)} == {DEFAULT_UID}


@pytest.mark.parametrize("direction", ["run-to-worker", "worker-to-run"])
async def test_a_process_that_left_its_namespaces_still_cannot_touch_the_other_side(
    sleeping_run: set[int], direction: str
) -> None:
    """The worst case: a process of one side in the host's pid namespace with its host uid and no
    capabilities (as a namespace escape would leave it) signals, reads /proc of and ptraces the other."""
    if os.geteuid() != 0:
        pytest.skip(
            "as an ordinary user every sandbox is that user's on the host: namespaces keep them apart"
        )
    if not os.path.exists(_PYTHON):
        pytest.skip(f"needs {_PYTHON} to run the probe as another uid")
    assert await js("1 + 1") == 2
    workers = _our_workers()
    uid, targets = (
        (DEFAULT_UID, workers) if direction == "run-to-worker" else (_jspool.WORKER_UID, sleeping_run)
    )
    done = subprocess.run(  # noqa: ASYNC221  # a short probe; the test awaits nothing meanwhile
        [_PYTHON, "-I", "-c", _PROBE, json.dumps(sorted(targets))],
        capture_output=True,
        text=True,
        user=uid,
        group=uid,
        extra_groups=[],
        cwd="/",
        timeout=20,
        check=False,
    )
    found: dict[str, list[str]] = json.loads(done.stdout)
    assert found
    for tried in found.values():
        assert not any(attempt.endswith(":reached") for attempt in tried), found
    assert all(_uids(pid) for pid in sleeping_run)  # the run sleeps on
    assert await js("2 + 2") == 4
    assert workers <= _our_workers()  # the workers live on


async def test_a_run_cannot_see_signal_or_read_a_js_worker(sleeping_run: set[int], tmp_path: Path) -> None:
    """From inside a sandboxed run (both start paths), given the worker's host pids."""
    assert await js("1 + 1") == 2
    workers = _our_workers()
    box = Sandbox(tmp_path / "attacker", limits=LIMITS)
    result = box.run(["python3", "-I", "-c", _PROBE, json.dumps(sorted(workers))])
    found: dict[str, list[str]] = json.loads(result.stdout)
    for tried in found.values():
        assert tried[:3] == [
            "signal:No such process",
            "proc:No such file or directory",
            "mem:No such file or directory",
        ]
        assert tried[3] in (
            "ptrace:No such process",
            "ptrace:Function not implemented",
            "ptrace:Operation not permitted",
        )
    assert await js("2 + 2") == 4
    assert workers <= _our_workers()  # the workers live on


@pytest.fixture
def broken_worker(
    monkeypatch: pytest.MonkeyPatch, sleeping_run: set[int]
) -> Iterator[tuple[SandboxLimits, set[int]]]:
    """A worker whose engine a script broke: it runs the probe against the sleeping run's host pids and
    answers with what it reached."""
    source = (
        "import json, subprocess\n"
        f"probe = {_PROBE!r}\n"
        f"pids = {sorted(sleeping_run)!r}\n"
        "sys.argv = ['probe', json.dumps(pids)]\n"
        "import io, contextlib\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out): exec(probe, {})\n"
        "frame(json.dumps({'value': json.loads(out.getvalue()), 'logs': []}).encode())\n"
        "time.sleep(60)\n"
    )
    monkeypatch.setattr(_jspool, "_worker_source", lambda: _READY + source)
    limits = dataclasses.replace(LIMITS, output_bytes=LIMITS.output_bytes + 7)
    yield limits, sleeping_run
    _jspool.pool(limits).close()


async def test_a_broken_worker_cannot_see_signal_or_read_a_run(
    broken_worker: tuple[SandboxLimits, set[int]],
) -> None:
    limits, run = broken_worker
    found: dict[str, list[str]] = await js("1", limits=limits)
    assert sorted(int(pid) for pid in found) == sorted(run)
    for tried in found.values():
        assert tried[:3] == [
            "signal:No such process",
            "proc:No such file or directory",
            "mem:No such file or directory",
        ]
    assert all(_uids(pid) for pid in run)  # the run sleeps on
