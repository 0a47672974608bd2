"""YAML tools bound to a command template: run in the sandbox, held to their declared network and
filesystem, and safe whatever values the model sends."""

import json
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tether.exceptions import UserError
from tether.execution import Executor
from tether.sandbox import cgroup_support
from tether.tools import load_tools
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio
needs_bwrap = pytest.mark.usefixtures("bwrap_installed")  # skips without bubblewrap, fails under CI

WHY = "Check what the command sees"
ARGV = "import json, sys; print(json.dumps(sys.argv[1:]))"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with a file at its top, a data folder, and a secret beside it on the host."""
    root = tmp_path / "ws"
    (root / "data").mkdir(parents=True)
    (root / "top.txt").write_text("top-level\n")
    (root / "data" / "rows.csv").write_text("a,b\n1,2\n")
    (tmp_path / "secret.txt").write_text("TOP-SECRET\n")
    return root


def definition(command: list[str], *, properties: str = "text: string", sandbox: str = "{}") -> str:
    return (
        f"tool:\n  name: cmd\n  command: {json.dumps(command)}\n  sandbox: {sandbox}\n"
        f"  input_schema:\n    properties: {{{properties}}}\n"
    )


async def run(tmp_path: Path, workspace: Path, tool_yaml: str, /, **arguments: Any) -> Any:
    source = tmp_path / "tools.yaml"
    source.write_text(tool_yaml, encoding="utf-8")
    executor = Executor(load_tools(source, workspace=workspace))
    return await executor.execute(ToolCall(id="c1", name="cmd", arguments=arguments, why=WHY))


HOSTILE = [
    "; touch /workspace/pwned",
    "$(touch /workspace/pwned)",
    "`touch /workspace/pwned`",
    "a b\tc\nd",
    "' \" \\ | & > /workspace/pwned",
    "*",
    "{text}{{}}",
    "x --rm -rf /",
    "é — 🐍",
]


@needs_bwrap
@pytest.mark.parametrize("value", HOSTILE)
async def test_each_templated_value_is_exactly_one_argv_element_and_no_shell_reads_it(
    tmp_path: Path, workspace: Path, value: str
) -> None:
    text = definition(["python3", "-c", ARGV, "{text}", "--label={text}!", "{{literal}}"],
                      sandbox="{filesystem: ['workspace/**']}")  # fmt: skip
    envelope = await run(tmp_path, workspace, text, text=value)
    assert isinstance(envelope, OkEnvelope), envelope
    assert json.loads(envelope.data["stdout"]) == [value, f"--label={value}!", "{literal}"]
    assert not (workspace / "pwned").exists()


@needs_bwrap
async def test_non_string_values_are_passed_as_json_and_absent_optionals_take_their_default_or_drop_out(
    tmp_path: Path, workspace: Path
) -> None:
    text = definition(
        ["python3", "-c", ARGV, "{n}", "--flag={flag}", "{items}", "--limit={limit}", "{maybe}"],
        properties="n: int, flag: boolean, items: {type: array, items: string}, "
        "limit: {type: int, default: 10}, maybe: string",
    )
    envelope = await run(tmp_path, workspace, text, n=-3, flag=True, items=["a b", "c"])
    assert json.loads(envelope.data["stdout"]) == ["-3", "--flag=true", '["a b","c"]', "--limit=10"]


@needs_bwrap
async def test_a_value_that_would_be_read_as_an_option_is_refused_unless_after_a_double_dash(
    tmp_path: Path, workspace: Path
) -> None:
    refused = await run(tmp_path, workspace, definition(["ls", "{text}"]), text="--output=/etc/passwd")
    assert isinstance(refused, ErrorEnvelope)
    assert (refused.error.code, refused.error.suggestion) == (
        "INVALID_ARGS",
        "Give a value that does not start with '-' (e.g. ./-name for a file).",
    )
    text = definition(["python3", "-c", ARGV, "--", "{text}"])
    assert json.loads((await run(tmp_path, workspace, text, text="-rf")).data["stdout"]) == ["--", "-rf"]


async def test_a_nul_byte_in_a_value_is_refused(tmp_path: Path, workspace: Path) -> None:
    refused = await run(tmp_path, workspace, definition(["echo", "{text}"]), text="a\x00b")
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.code == "INVALID_ARGS"


@needs_bwrap
@pytest.mark.parametrize("network", [False, True])
async def test_the_declared_network_is_enforced(tmp_path: Path, workspace: Path, network: bool) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        code = (
            f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2); print('connected')"
        )
        text = definition(
            ["python3", "-c", code], properties="", sandbox=f"{{network: {str(network).lower()}}}"
        )
        envelope = await run(tmp_path, workspace, text)
    assert isinstance(envelope, OkEnvelope)
    if network:
        assert envelope.data["stdout"] == "connected\n"
    else:
        assert envelope.data["exit_code"] != 0
        assert "connected" not in envelope.data["stdout"]
        assert "Error" in envelope.data["stderr"]


@needs_bwrap
async def test_by_default_the_command_sees_none_of_the_workspace(tmp_path: Path, workspace: Path) -> None:
    envelope = await run(tmp_path, workspace, definition(["ls", "-A"], properties=""))
    assert envelope.data["stdout"] == ""
    text = definition(["sh", "-c", "echo hi > made.txt; cat made.txt"], properties="")
    assert (await run(tmp_path, workspace, text)).data["stdout"] == "hi\n"
    assert not (workspace / "made.txt").exists()  # the scratch folder, not the workspace


@needs_bwrap
async def test_a_read_only_workspace_can_be_read_but_not_changed(tmp_path: Path, workspace: Path) -> None:
    ro = "{filesystem: ['workspace/**:ro']}"
    read = await run(
        tmp_path, workspace, definition(["cat", "--", "{text}"], sandbox=ro), text="data/rows.csv"
    )
    assert read.data["stdout"] == "a,b\n1,2\n"
    for attack in (
        "echo x > top.txt",
        "rm -f top.txt",
        "mkdir new",
        "mv data gone",
        "chmod 777 top.txt",
        "mount -o remount,rw / 2>&1; echo x > top.txt",
    ):
        envelope = await run(tmp_path, workspace, definition(["sh", "-c", attack], properties="", sandbox=ro))
        assert envelope.data["exit_code"] != 0, attack
    assert sorted(p.name for p in workspace.iterdir()) == ["data", "top.txt"]
    assert (workspace / "top.txt").read_text() == "top-level\n"


@needs_bwrap
@pytest.mark.parametrize(
    "path", ["top.txt", "../secret.txt", "/etc/shadow", "data/../top.txt", "/proc/self/root"]
)
async def test_only_the_declared_folders_are_visible(tmp_path: Path, workspace: Path, path: str) -> None:
    path = f"{path}{workspace}/top.txt" if path.startswith("/proc") else path
    ro = "{filesystem: ['workspace/data/**:ro']}"
    text = definition(["cat", "--", "{text}"], sandbox=ro)
    assert (await run(tmp_path, workspace, text, text="data/rows.csv")).data["stdout"] == "a,b\n1,2\n"
    envelope = await run(tmp_path, workspace, text, text=path)
    assert envelope.data["exit_code"] != 0
    assert envelope.data["stdout"] == ""


@needs_bwrap
async def test_a_declared_folder_swapped_for_a_link_out_is_not_mounted(
    tmp_path: Path, workspace: Path
) -> None:
    shutil.rmtree(workspace / "data")
    (workspace / "data").symlink_to(tmp_path)  # what code sharing the workspace could plant
    text = definition(["cat", "--", "{text}"], sandbox="{filesystem: ['workspace/data/**:ro']}")
    envelope = await run(tmp_path, workspace, text, text="data/secret.txt")
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "PERMISSION_DENIED"


@needs_bwrap
async def test_a_writable_workspace_is_writable(tmp_path: Path, workspace: Path) -> None:
    text = definition(
        ["sh", "-c", "echo made > out.txt"], properties="", sandbox="{filesystem: ['workspace/**']}"
    )
    assert (await run(tmp_path, workspace, text)).data["exit_code"] == 0
    assert (workspace / "out.txt").read_text() == "made\n"


@needs_bwrap
async def test_a_command_past_its_declared_timeout_is_stopped(tmp_path: Path, workspace: Path) -> None:
    text = definition(["sleep", "5"], properties="", sandbox="{timeout_ms: 300}")
    envelope = await run(tmp_path, workspace, text)
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "TIMEOUT"


async def test_without_bubblewrap_a_command_tool_refuses_rather_than_run_on_the_host(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tether.sandbox._sandbox.find_bwrap", lambda: None)
    envelope = await run(tmp_path, workspace, definition(["touch", "/tmp/ran-on-host"], properties=""))
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.recoverable) == ("SANDBOX_UNAVAILABLE", False)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tool: {name: t, command: 'wc -w {path}'}", "not a shell line"),
        ("tool: {name: t, command: []}", "non-empty list of strings"),
        ("tool: {name: t, command: [cat, '{path}']}", r"uses \{path\}, which input_schema does not declare"),
        ("tool: {name: t, command: ['{p}'], input_schema: {properties: {p: string}}}", "must be fixed"),
        ("tool: {name: t, command: [echo, 'a{b']}", "unmatched '{'"),
        ("tool: {name: t, command: [ls], sandbox: {filesystem: ['/etc/**:ro']}}", "not a workspace path"),
        (
            "tool: {name: t, command: [ls], sandbox: {filesystem: ['workspace/../x/**:ro']}}",
            "not a workspace",
        ),
        ("tool: {name: t, command: [ls], sandbox: {filesystem: ['workspace/data/**']}}", "only the whole"),
        (
            "tool: {name: t, command: [ls], sandbox: {filesystem: ['workspace/**', 'workspace/a/**:ro']}}",
            "keep one of the two",
        ),
    ],
)
def test_bad_command_definitions_are_user_errors(tmp_path: Path, text: str, message: str) -> None:
    source = tmp_path / "tools.yaml"
    source.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        load_tools(source)


@needs_bwrap
async def test_memory_spread_over_a_commands_processes_is_quota_exceeded(
    tmp_path: Path, workspace: Path
) -> None:
    support = cgroup_support()
    if support.version is None:
        pytest.skip(f"no writable cgroup here: {support.reason}")
    code = (
        "import os, time\n"
        "for i in range(8):\n"
        "    if os.fork() == 0:\n"
        "        block = bytearray(160 * 1024 * 1024)\n"
        "        for j in range(0, len(block), 4096): block[j] = 1\n"
        "        time.sleep(2); os._exit(0)\n"
        "for _ in range(8): os.wait()\n"
    )
    envelope = await run(tmp_path, workspace, definition(["python3", "-c", code], properties=""))
    assert isinstance(envelope, ErrorEnvelope), envelope
    assert envelope.error.code == "QUOTA_EXCEEDED"
    assert envelope.error.message.startswith("its processes together passed 1024 MiB of memory"), envelope


@needs_bwrap
async def test_a_deep_tree_a_command_leaves_is_no_error_and_nothing_stays_on_the_host(
    tmp_path: Path, workspace: Path
) -> None:
    def scratch() -> set[Path]:  # tether's own folders only: other programs (pyright, pytest) use /tmp too
        return {p for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith("tether-")}

    before = scratch()
    deep = "d=0; while [ $d -lt 1500 ]; do mkdir x && cd x || exit 1; d=$((d+1)); done; chmod 0 .; echo deep"
    envelope = await run(tmp_path, workspace, definition(["sh", "-c", deep], properties=""))
    assert envelope.data["stdout"] == "deep\n", envelope
    assert scratch() <= before  # no scratch folder left behind
