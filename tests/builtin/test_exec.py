"""The exec pack through the executor: the envelopes a model sees, attacks included."""

import os
import socket
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from tether.builtin.exec import exec_pack
from tether.execution import Executor
from tether.sandbox import SandboxLimits
from tether.types import ErrorEnvelope, ErrorInfo, OkEnvelope, ToolCall

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("bwrap_installed")]

LIMITS = SandboxLimits(processes=32, output_bytes=32 * 1024, file_size_bytes=4 * 1024 * 1024, timeout_s=5)
WHY = "Run the build to check that the patch compiles"


async def call(workspace: Path, name: str, *, enabled: bool = True, **arguments: Any) -> Any:
    executor = Executor(exec_pack(workspace, enabled=enabled, limits=LIMITS))
    return await executor.execute(ToolCall(id="c1", name=name, arguments=arguments, why=WHY))


@pytest.mark.without_bwrap
async def test_code_running_tools_refuse_unless_enabled(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "terminal.run", enabled=False, cmd=["true"])
    assert envelope == ErrorEnvelope(
        error=ErrorInfo(
            code="PERMISSION_DENIED",
            message="terminal.run is disabled: code execution (autoexec) is off for this agent",
            recoverable=False,
            suggestion="Ask the user to enable code execution for this agent; until then use the fs tools.",
        )
    )
    for name, args in (
        ("python.exec", {"code": "1"}),
        ("js.exec", {"code": "1"}),
        ("terminal_execute", {"command": "true"}),
    ):
        assert (await call(tmp_path, name, enabled=False, **args)).error.code == "PERMISSION_DENIED"


@pytest.mark.without_bwrap
async def test_without_bubblewrap_the_tools_refuse_rather_than_run_unsandboxed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tether.sandbox._sandbox.find_bwrap", lambda: None)
    envelope = await call(tmp_path, "terminal.run", cmd=["true"])
    assert envelope.error.code == "SANDBOX_UNAVAILABLE"
    assert (
        envelope.error.suggestion
        == "Tell the user: install bubblewrap (apt-get install bubblewrap) to run code safely."
    )


@pytest.mark.without_bwrap
async def test_an_explicit_opt_out_runs_without_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tether.sandbox._sandbox.find_bwrap", lambda: None)
    tools = exec_pack(tmp_path, enabled=True, limits=LIMITS, unsandboxed=True)
    envelope = await Executor(tools).execute(
        ToolCall(id="c1", name="terminal.run", arguments={"cmd": ["pwd"]}, why=WHY)
    )
    assert isinstance(envelope, OkEnvelope)
    assert envelope.data["stdout"] == f"{tmp_path.resolve()}\n"


async def test_terminal_run_returns_output_and_exit_code(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    envelope = await call(tmp_path, "terminal.run", cmd=["sh", "-c", "pwd; echo oops >&2; exit 3"], cwd="sub")
    assert isinstance(envelope, OkEnvelope)
    assert {k: envelope.data[k] for k in ("stdout", "stderr", "exit_code")} == {
        "stdout": "/workspace/sub\n",
        "stderr": "oops\n",
        "exit_code": 3,
    }


async def test_terminal_run_refuses_a_cwd_outside_the_workspace(tmp_path: Path) -> None:
    assert (await call(tmp_path, "terminal.run", cmd=["ls"], cwd="../..")).error.code == "PERMISSION_DENIED"


async def test_terminal_execute_is_seed_000s_shell_alias(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "terminal_execute", command="echo a | tr a b", timeout=5000)
    assert envelope.data["stdout"] == "b\n"


async def test_python_exec_returns_output_value_and_artifacts(tmp_path: Path) -> None:
    code = "import json\nrows = open('in/data.csv').read().splitlines()\nopen('out.json', 'w').write(json.dumps(rows))\nprint('ok')\nlen(rows)"
    envelope = await call(tmp_path, "python.exec", code=code, files={"in/data.csv": "a,b\n1,2\n"})
    assert {k: envelope.data[k] for k in ("stdout", "exit_code", "return_value", "artifacts")} == {
        "stdout": "ok\n",
        "exit_code": 0,
        "return_value": 2,
        "artifacts": [{"path": "out.json", "size": 14, "content": '["a,b", "1,2"]'}],
    }


async def test_python_exec_reports_errors_as_output(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "python.exec", code="1/0")
    assert (envelope.data["exit_code"], envelope.data["return_value"]) == (1, None)
    assert envelope.data["stderr"].rstrip().endswith("ZeroDivisionError: division by zero")


async def test_python_exec_input_files_cannot_escape(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "python.exec", code="1", files={"../../x": "pwned"})
    assert envelope.error.code == "PERMISSION_DENIED"


async def test_js_exec_evaluates_with_input_and_logs(tmp_path: Path) -> None:
    pytest.importorskip("_quickjs")
    envelope = await call(
        tmp_path, "js.exec", code="console.log('sum'); input.a + input.b", input_json={"a": 1, "b": 2}
    )
    assert envelope == OkEnvelope(data={"result": 3, "logs": ["sum"]})


async def test_js_exec_has_no_host_apis_and_is_time_limited(tmp_path: Path) -> None:
    pytest.importorskip("_quickjs")
    apis = await call(
        tmp_path, "js.exec", code="[typeof require, typeof process, typeof fetch, typeof XMLHttpRequest]"
    )
    assert apis.data["result"] == ["undefined"] * 4
    spin = await call(tmp_path, "js.exec", code="while (true) {}", timeout_ms=300)
    assert spin.error.code == "TIMEOUT"
    bomb = await call(tmp_path, "js.exec", code="var a = []; while (true) a.push(new Array(1e6).fill(1))")
    assert bomb.error.code == "QUOTA_EXCEEDED"


# ------------------------------------------------------------------ the attack suite, as a model sees it


async def test_attack_write_outside_the_workspace(tmp_path: Path) -> None:
    name = f"pwned-{uuid.uuid4().hex}"
    envelope = await call(
        tmp_path,
        "terminal_execute",
        command=f"echo x > /{name}; echo x > /usr/{name}; echo x > /workspace/../{name}",
    )
    assert envelope.data["stderr"].count("Read-only file system") == 3
    assert not Path("/", name).exists()
    assert not Path("/usr", name).exists()


async def test_attack_read_host_secrets(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "terminal.run", cmd=["cat", "/etc/shadow"])
    assert (envelope.data["exit_code"], envelope.data["stderr"]) == (
        1,
        "cat: /etc/shadow: No such file or directory\n",
    )


async def test_attack_remount_read_only_root_writable(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "terminal.run", cmd=["mount", "-o", "remount,rw", "/usr"])
    assert envelope.data["exit_code"] == 32
    assert (
        "must be superuser" in envelope.data["stderr"]
        or "permission denied" in envelope.data["stderr"].lower()
    )


async def test_attack_network_to_a_localhost_listener(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        port = server.getsockname()[1]
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)"
        envelope = await call(tmp_path, "python.exec", code=code)
        with pytest.raises(BlockingIOError):
            server.accept()
    assert envelope.data["stderr"].rstrip().endswith("PermissionError: [Errno 13] Permission denied")


async def test_attack_dns_lookup(tmp_path: Path) -> None:
    envelope = await call(
        tmp_path, "python.exec", code="import socket\nsocket.getaddrinfo('example.com', 443)"
    )
    assert "socket.gaierror" in envelope.data["stderr"]


async def test_attack_fork_bomb(tmp_path: Path) -> None:
    code = (
        "import os, time\n"
        "n = 0\n"
        "while True:\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except BlockingIOError:\n"
        "        print('fork refused')\n"
        "        break\n"
        "    if pid == 0:\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "    n += 1\n"
        "n"
    )
    envelope = await call(tmp_path, "python.exec", code=code)
    assert isinstance(envelope, OkEnvelope)
    assert (envelope.data["stdout"], envelope.data["exit_code"]) == ("fork refused\n", 0)
    assert envelope.data["return_value"] < LIMITS.processes


async def test_attack_memory_bomb(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "python.exec", code="x = bytearray(8 * 1024 ** 3)")
    assert envelope.data["stderr"].rstrip().endswith("MemoryError")


async def test_attack_disk_fill(tmp_path: Path) -> None:
    envelope = await call(
        tmp_path, "terminal_execute", command="dd if=/dev/zero of=big bs=1M count=64; echo $?"
    )
    assert envelope.data["stdout"] == "153\n"  # 128 + SIGXFSZ
    assert (tmp_path / "big").stat().st_size == LIMITS.file_size_bytes


async def test_attack_output_flood(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "terminal.run", cmd=["yes"])
    assert envelope.error.code == "QUOTA_EXCEEDED"
    assert (
        envelope.error.suggestion
        == "Redirect output to a file in the workspace and read parts of it with fs.read."
    )


async def test_attack_setsid_child_outliving_the_timeout(tmp_path: Path) -> None:
    marker = f"survivor-{uuid.uuid4().hex}"
    command = f"setsid python3 -c 'import time; time.sleep(60)' {marker} & sleep 30"
    envelope = await call(tmp_path, "terminal_execute", command=command, timeout=1000)
    assert envelope.error.code == "TIMEOUT"
    survivors: list[str] = []
    for _ in range(40):  # the kernel tears the pid namespace down asynchronously
        survivors = [p for p in os.listdir("/proc") if p.isdigit() and marker.encode() in _cmdline(p)]
        if not survivors:
            break
        await anyio.sleep(0.05)
    assert survivors == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path("/proc", pid, "cmdline").read_bytes()
    except OSError:
        return b""


async def test_attack_sleeping_children_outliving_the_timeout(tmp_path: Path) -> None:
    marker = f"sleeper-{uuid.uuid4().hex}"
    sleeper = f"python3 -c 'import time; time.sleep(60)' {marker}"
    envelope = await call(
        tmp_path, "terminal_execute", command=f"{sleeper} & {sleeper} & echo started; wait", timeout=1000
    )
    assert envelope == ErrorEnvelope(
        error=ErrorInfo(
            code="TIMEOUT",
            message="stopped after 1 s; the whole process tree was killed.\nstdout (last 2000 chars):\nstarted\n",
            recoverable=True,
            suggestion="Make it faster or do less per call (the limit is 5 s).",
        )
    )
    survivors: list[str] = []
    for _ in range(40):  # the kernel tears the pid namespace down asynchronously
        survivors = [p for p in os.listdir("/proc") if p.isdigit() and marker.encode() in _cmdline(p)]
        if not survivors:
            break
        await anyio.sleep(0.05)
    assert survivors == []


async def test_attack_output_flood_envelope(tmp_path: Path) -> None:
    envelope = await call(tmp_path, "terminal.run", cmd=["yes"])
    assert envelope == ErrorEnvelope(
        error=ErrorInfo(
            code="QUOTA_EXCEEDED",
            message=f"output passed {LIMITS.output_bytes} bytes, so the command was stopped.\n"
            "stdout (last 2000 chars):\n" + "y\n" * 1000,
            recoverable=True,
            suggestion="Redirect output to a file in the workspace and read parts of it with fs.read.",
        )
    )
