"""A Python binding that declares a network or filesystem restriction runs in the sandbox, held to it."""

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from tether.exceptions import UserError
from tether.execution import Executor
from tether.tools import load_tools
from tether.types import ErrorEnvelope, NeedsEnvelope, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio
needs_bwrap = pytest.mark.usefixtures("bwrap_installed")  # skips without bubblewrap, fails under CI

HELPERS = """
import asyncio, os, socket
from tether import NeedsInput, ToolError

def connect(port):
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        return "connected"

def read(path):
    print("printed output does not disturb the reply")
    with open(path) as f:
        return f.read()

def write(path):
    with open(path, "w") as f:
        f.write("changed")
    return "wrote"

def refuse():
    raise ToolError("NOT_FOUND", "no such order", suggestion="List the orders first")

def ask():
    raise NeedsInput(duration=True)

async def who():
    await asyncio.sleep(0)
    return {"uid": os.getuid(), "sees_etc_shadow": os.path.exists("/etc/shadow")}

def slow():
    import time
    time.sleep(5)
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """Tools and their helpers in one folder, beside a secret; a workspace with a file."""
    (tmp_path / "helpers.py").write_text(HELPERS, encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP-SECRET", encoding="utf-8")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("hello", encoding="utf-8")
    return tmp_path


async def call(layout: Path, function: str, sandbox: str, **arguments: Any) -> Any:
    properties = ", ".join(f"{name}: {{}}" for name in arguments)
    (layout / "tools.yaml").write_text(
        f"tool: {{name: t, python: 'helpers.py:{function}', requires_why: false, sandbox: {sandbox},"
        f" input_schema: {{properties: {{{properties}}}}}}}",
        encoding="utf-8",
    )
    tools = load_tools(layout / "tools.yaml", workspace=layout / "ws")
    return await Executor(tools).execute(ToolCall(id="c1", name="t", arguments=arguments))


@needs_bwrap
async def test_a_function_declared_without_network_cannot_reach_it(layout: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.2)
        port = server.getsockname()[1]
        refused = await call(layout, "connect", "{network: false}", port=port)
        assert isinstance(refused, ErrorEnvelope)
        assert refused.error.code == "INTERNAL"
        # the model is told what the function raised, as for any other tool (the traceback is journaled)
        assert refused.error.message.startswith(
            ("t failed: it raised PermissionError.", "t failed: it raised OSError.")
        )
        with pytest.raises(TimeoutError):
            server.accept()  # nothing ever connected
        allowed = await call(layout, "connect", "{network: true}", port=port)
    assert allowed == OkEnvelope(data="connected")


@needs_bwrap
@pytest.mark.parametrize("sandbox", ["{network: false}", "{network: true, filesystem: []}"])
@pytest.mark.parametrize("path", ["notes.txt", "../secret.txt", "/etc/shadow", "../helpers.py"])
async def test_a_function_declared_without_files_sees_none(layout: Path, sandbox: str, path: str) -> None:
    absolute = str(layout / path) if path.startswith("..") else path
    for given in (path, absolute):
        envelope = await call(layout, "read", sandbox, path=given)
        assert isinstance(envelope, ErrorEnvelope), given


@needs_bwrap
async def test_a_read_only_workspace_is_read_but_never_changed(layout: Path) -> None:
    ro = "{filesystem: ['workspace/**:ro']}"
    assert await call(layout, "read", ro, path="notes.txt") == OkEnvelope(data="hello")
    assert isinstance(await call(layout, "read", ro, path="../secret.txt"), ErrorEnvelope)
    assert isinstance(await call(layout, "write", ro, path="notes.txt"), ErrorEnvelope)
    assert (layout / "ws" / "notes.txt").read_text() == "hello"
    assert await call(layout, "write", "{filesystem: ['workspace/**']}", path="notes.txt") == OkEnvelope(
        data="wrote"
    )
    assert (layout / "ws" / "notes.txt").read_text() == "changed"


@needs_bwrap
async def test_tool_signals_async_functions_and_the_unprivileged_uid(layout: Path) -> None:
    refused = await call(layout, "refuse", "{network: false}")
    assert isinstance(refused, ErrorEnvelope)
    assert (refused.error.code, refused.error.message, refused.error.suggestion) == (
        "NOT_FOUND",
        "no such order",
        "List the orders first",
    )
    assert await call(layout, "ask", "{network: false}") == NeedsEnvelope(needs={"duration": True})
    assert await call(layout, "who", "{network: false}") == OkEnvelope(
        data={"uid": 65534 if os.geteuid() == 0 else os.geteuid(), "sees_etc_shadow": False}
    )


@needs_bwrap
async def test_a_function_past_its_timeout_is_stopped(layout: Path) -> None:
    envelope = await call(layout, "slow", "{network: false, timeout_ms: 500}")
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "TIMEOUT"


@needs_bwrap
async def test_a_module_path_runs_sandboxed_too(layout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = layout / "mytools"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "text.py").write_text("def count(text):\n    return len(text.split())\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(layout))  # pyright: ignore[reportUnknownMemberType] - pytest's own stub
    (layout / "tools.yaml").write_text(
        "tool: {name: t, python: 'mytools.text:count', requires_why: false, sandbox: {network: false},"
        " input_schema: {properties: {text: string}}}",
        encoding="utf-8",
    )
    tools = load_tools(layout / "tools.yaml", workspace=layout / "ws")
    envelope = await Executor(tools).execute(ToolCall(id="c1", name="t", arguments={"text": "a b c"}))
    assert envelope == OkEnvelope(data=3)


async def test_without_bubblewrap_it_refuses_rather_than_run_unrestricted(
    layout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tether.sandbox._sandbox.find_bwrap", lambda: None)
    envelope = await call(layout, "who", "{network: false}")
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "SANDBOX_UNAVAILABLE"


def test_a_module_that_cannot_be_found_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(
        "tool: {name: t, python: 'no_such_module_xyz:f', sandbox: {network: false}}", encoding="utf-8"
    )
    with pytest.raises(UserError, match="cannot find module 'no_such_module_xyz'"):
        load_tools(tmp_path / "tools.yaml")
