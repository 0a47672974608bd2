"""The escape classes of issue 12 through the executor, as a hostile model would try them: files the
runtime reads back, output on every channel, cleanup, RAM-backed space, memory spread over processes.
Every attempt runs on both start paths: a zygote's spare, and one bubblewrap per run."""

import json
import os
import resource
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tether.builtin.exec import exec_pack
from tether.execution import Executor
from tether.sandbox import (
    SandboxLimits,
    _zygote,  # both start paths are tried
    cgroup_support,
)
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.usefixtures("bwrap_installed"),  # skips without bubblewrap, fails under CI
]

_MiB = 1024 * 1024
LIMITS = SandboxLimits(
    processes=32,
    output_bytes=32 * 1024,
    file_size_bytes=4 * _MiB,
    workspace_bytes=8 * _MiB,
    tmp_bytes=4 * _MiB,
    memory_bytes=256 * _MiB,
    timeout_s=20,
)
WHY = "Run the analysis the user asked for"


@pytest.fixture(autouse=True, params=["zygote", "bwrap"])
def spawn_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each attack on both start paths; on the zygote path the test fails if a run fell back to bubblewrap."""
    path: str = request.param
    monkeypatch.setattr(_zygote, "enabled", path == "zygote")
    _zygote.reset()
    yield path
    if path == "zygote":
        works, why = _zygote.status()
        assert works, why


async def call(workspace: Path, name: str, **arguments: Any) -> Any:
    executor = Executor(exec_pack(workspace, enabled=True, limits=LIMITS))
    return await executor.execute(ToolCall(id="c1", name=name, arguments=arguments, why=WHY))


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A host file tether can read and the sandbox cannot: JSON, so a read-back would parse."""
    path = tmp_path / "secret.json"
    path.write_text('"TOP-SECRET"')
    path.chmod(0o600)
    return path


# ----------------------------------------------------------------- 1. files read back from the sandbox


async def test_python_exec_never_reads_back_a_planted_symlink_fifo_or_huge_file(
    tmp_path: Path, secret: Path
) -> None:
    code = (
        "import os\n"
        f"for name in ('.tether-return.json', 'report.txt', 'out.json'): os.symlink({str(secret)!r}, name)\n"
        f"os.symlink({str(secret.parent)!r}, 'hostdir')\n"
        "os.mkfifo('pipe.txt')\n"
        "with open('huge.bin', 'wb') as f: f.truncate(3 << 20)\n"
    )
    envelope = await call(tmp_path / "ws", "python.exec", code=code)
    assert isinstance(envelope, OkEnvelope)
    assert "TOP-SECRET" not in json.dumps(envelope.data)
    assert envelope.data["artifacts"] == [{"path": "huge.bin", "size": 3 << 20, "content": None}]


async def test_python_exec_leaves_nothing_on_the_host(tmp_path: Path) -> None:
    before = set(os.listdir(tempfile.gettempdir()))
    await call(tmp_path / "ws", "python.exec", code="open('left.txt', 'w').write('x')")
    assert {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("tether")} == set()


# ------------------------------------------------------------------------ 5. output caps, every channel


def _returned_bytes(envelope: OkEnvelope | ErrorEnvelope) -> int:
    if isinstance(envelope, ErrorEnvelope):
        return len(envelope.error.message)
    data: dict[str, Any] = envelope.data
    texts = [data.get("stdout", ""), data.get("stderr", ""), json.dumps(data.get("return_value"))]
    texts += [a["content"] or "" for a in data.get("artifacts", [])]
    return sum(len(t) for t in texts)


async def test_python_exec_artifacts_never_pass_the_output_cap(tmp_path: Path) -> None:
    code = "for i in range(40): open(f'part{i}.txt', 'w').write('x' * 60000)"
    envelope = await call(tmp_path / "ws", "python.exec", code=code)
    assert isinstance(envelope, OkEnvelope)
    assert len(envelope.data["artifacts"]) == 40  # all listed; contents only while the budget lasts
    assert _returned_bytes(envelope) <= LIMITS.output_bytes


async def test_python_exec_a_huge_return_value_is_quota_exceeded(tmp_path: Path) -> None:
    envelope = await call(tmp_path / "ws", "python.exec", code="'x' * 10_000_000")
    assert envelope.error.code == "QUOTA_EXCEEDED"
    assert envelope.error.message.startswith("the return value is 10000002 characters, over the cap of")


async def test_a_stderr_flood_is_capped_like_stdout(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "terminal_execute", command="yes >&2")
    assert envelope.error.code == "QUOTA_EXCEEDED"
    assert _returned_bytes(envelope) <= LIMITS.output_bytes


async def test_js_exec_logs_and_result_never_pass_the_output_cap(tmp_path: Path) -> None:
    pytest.importorskip("_quickjs")
    logs = await call(
        tmp_path, "js.exec", code="for (let i = 0; i < 100; i++) console.log('x'.repeat(10000)); 1"
    )
    assert isinstance(logs, OkEnvelope)
    assert sum(len(line) for line in logs.data["logs"]) <= LIMITS.output_bytes
    assert logs.data["result"] == 1
    big = await call(tmp_path, "js.exec", code="'x'.repeat(10000000)")
    assert big.error.code == "QUOTA_EXCEEDED"


# ------------------------------------------------------------------------------------ 6. cleanup


async def test_python_exec_survives_a_1500_deep_tree(tmp_path: Path) -> None:
    code = "import os\nfor _ in range(1500):\n    os.mkdir('d'); os.chdir('d')\nopen('f', 'w').write('x')\n'done'"
    envelope = await call(tmp_path / "ws", "python.exec", code=code)
    assert isinstance(envelope, OkEnvelope)
    assert (envelope.data["return_value"], envelope.data["artifacts"]) == ("done", [])  # below the depth cap


# --------------------------------------------------------------------------- 4. RAM-backed space


async def test_python_exec_filling_its_directory_is_quota_exceeded(tmp_path: Path) -> None:
    code = "for i in range(8):\n    with open(f'big{i}', 'wb') as f: f.write(bytes(3 << 20))"
    envelope = await call(tmp_path / "ws", "python.exec", code=code)
    assert envelope.error.code == "QUOTA_EXCEEDED"
    assert envelope.error.message.startswith("the code filled its disk space (.: the directory holds 8 MiB")


async def test_terminal_writing_past_the_workspace_quota_keeps_nothing(tmp_path: Path) -> None:
    """Files each under RLIMIT_FSIZE, together past `workspace_bytes`: on both paths the tool answers
    QUOTA_EXCEEDED and the host workspace keeps none of the run's changes."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "kept").write_text("before")
    command = "rm kept; for i in 1 2 3 4; do head -c 3000000 /dev/zero > part$i; done 2>&1; ls"
    envelope = await call(tmp_path / "ws", "terminal_execute", command=command)
    assert envelope.error.code == "QUOTA_EXCEEDED", envelope
    assert "none of its changes to the workspace were kept" in envelope.error.message
    assert [p.name for p in (tmp_path / "ws").iterdir()] == ["kept"]


async def test_filling_dev_shm_stops_at_its_size(tmp_path: Path) -> None:
    envelope = await call(
        tmp_path,
        "terminal_execute",
        command="for i in 1 2 3; do dd if=/dev/zero of=/dev/shm/$i bs=1M count=3; done 2>&1",
    )
    assert "No space left on device" in envelope.data["stdout"]


# ------------------------------------------------------------------- 3. memory across processes


async def test_memory_spread_over_processes_is_quota_exceeded(tmp_path: Path) -> None:
    support = cgroup_support()
    if support.version is None:
        pytest.skip(f"no writable cgroup here: {support.reason}")
    code = (
        "import os, time\n"
        "for i in range(8):\n"
        "    if os.fork() == 0:\n"
        "        block = bytearray(96 * 1024 * 1024)\n"
        "        for j in range(0, len(block), 4096): block[j] = 1\n"
        "        time.sleep(2); os._exit(0)\n"
        "for _ in range(8): os.wait()\n"
    )
    envelope = await call(tmp_path / "ws", "python.exec", code=code)
    assert isinstance(envelope, ErrorEnvelope), envelope
    assert envelope.error.message.startswith("its processes together passed 256 MiB of memory"), envelope


# ------------------------------------------------------------------------- 7. js.exec, killable


def _cpu_s(pid: int | str) -> float:
    try:
        fields = Path("/proc", str(pid), "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _parent(pid: str) -> str:
    try:
        return Path("/proc", pid, "stat").read_text().rsplit(")", 1)[1].split()[1]
    except OSError:
        return "0"


def _ours(pid: str) -> bool:
    """Whether this test process is an ancestor of `pid` (other programs on the machine run workers too)."""
    me = str(os.getpid())
    for _ in range(64):
        pid = _parent(pid)
        if pid == me:
            return True
        if pid in ("0", "1"):
            return False
    return False


def _workers_cpu_s() -> float:
    """CPU time of tether itself plus every js.exec worker process it started."""
    total = _cpu_s("self")
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if b"js.exec's worker" in Path("/proc", pid, "cmdline").read_bytes() and _ours(pid):
                    total += _cpu_s(pid)
            except OSError:
                continue
    return total


async def test_js_exec_a_microtask_loop_is_stopped_not_left_spinning(tmp_path: Path) -> None:
    pytest.importorskip("_quickjs")
    code = "(async () => { for (;;) { await 0 } })(); for (;;) {}"
    envelope = await call(tmp_path, "js.exec", code=code, timeout_ms=500)
    assert envelope.error.code == "TIMEOUT"
    assert envelope.error.message == "stopped after 0.5 s; its worker process was killed"
    before = _workers_cpu_s()
    await anyio.sleep(1)
    assert _workers_cpu_s() - before < 0.3  # nothing spins on: in tether's process it burnt a core


async def test_js_exec_typed_arrays_stay_out_of_tethers_memory(tmp_path: Path) -> None:
    pytest.importorskip("_quickjs")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = (
        "var held = []; for (let i = 0; i < 8; i++) held.push(new Uint8Array(128 * 1024 * 1024).fill(1)); 1"
    )
    envelope = await call(tmp_path, "js.exec", code=code)
    assert envelope.error.code == "QUOTA_EXCEEDED"
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100 * 1024  # in-process, tether itself held a gigabyte


async def test_js_exec_works_again_after_its_worker_was_killed(tmp_path: Path) -> None:
    pytest.importorskip("_quickjs")
    assert (await call(tmp_path, "js.exec", code="for (;;) {}", timeout_ms=300)).error.code == "TIMEOUT"
    assert (await call(tmp_path, "js.exec", code="[1, 2].map(x => x * 2)")).data == {
        "result": [2, 4],
        "logs": [],
    }


# ------------------------------------------------------------- input no program can be given


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("terminal_execute", {"command": "echo a\x00b"}, "an argument holds a NUL byte"),
        ("terminal_execute", {"command": "echo \ud800"}, "an argument is not Unicode text (a lone surrogate"),
        ("terminal.run", {"cmd": ["echo", "ok\udfff"]}, "an argument is not Unicode text (a lone surrogate"),
        (
            "terminal_execute",
            {"command": "echo " + "a" * 300_000},
            "the command line and environment are 300",
        ),
        ("python.exec", {"code": "'\ud800'"}, "code is not Unicode text (a lone surrogate, '\\ud800', at"),
        ("python.exec", {"code": "1", "files": {"a\udc00": "x"}}, "a file name is not Unicode text"),
        ("python.exec", {"code": "1", "files": {"a": "\udc00"}}, "the file 'a' is not Unicode text"),
    ],
    ids=["nul", "surrogate", "surrogate-argv", "too-long", "py-surrogate", "py-name", "py-content"],
)
async def test_input_no_program_can_be_given_is_invalid_args(
    tmp_path: Path, name: str, arguments: dict[str, Any], message: str
) -> None:
    """Not INTERNAL ("do not retry"): the model can fix these. A JSON `\\ud800` escape decodes to a lone
    surrogate, which no file name or argv can hold; a 300 KB command line passes what one message to a
    spare or the fork server carries, and the kernel's bound on one argument."""
    envelope = await call(tmp_path / "ws", name, **arguments)
    assert isinstance(envelope, ErrorEnvelope), envelope
    assert (envelope.error.code, envelope.error.message[: len(message)]) == ("INVALID_ARGS", message)


async def test_a_long_command_of_wide_characters_still_runs(tmp_path: Path) -> None:
    """120 KB of four-byte characters: within the kernel's bound, and sent to a spare as UTF-8 (as
    `\\u` escapes it was 360 KB, past what one message carries, and the call failed)."""
    envelope = await call(
        tmp_path / "ws", "terminal_execute", command="echo " + "\U0001f600" * 30_000 + " | wc -c"
    )
    assert isinstance(envelope, OkEnvelope), envelope
    assert envelope.data["stdout"] == "120001\n"
