"""YAML tools bound to what runs them: a Python callable by import path, or an MCP server entry."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tether.exceptions import UserError
from tether.execution import Executor
from tether.tools import dump_yaml, load_tools, specs_from_yaml
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

pytestmark = pytest.mark.anyio

WHY = "Count the words before summarising the file"


def write(tmp_path: Path, text: str, name: str = "tools.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_python_binding_by_module_path_runs_the_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "text_tools.py").write_text(
        "def count_words(text, minimum=0):\n    return {'words': len(text.split()), 'minimum': minimum}\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))  # pyright: ignore[reportUnknownMemberType] - pytest's own stub
    source = write(
        tmp_path,
        """
tool:
  name: text.count
  python: text_tools:count_words
  input_schema:
    properties:
      text: {type: string}
      minimum: {type: int}
      why: {type: string}
    required: [text, why]
""",
    )
    executor = Executor(load_tools(source))
    call = ToolCall(id="c1", name="text.count", arguments={"text": "one two three", "minimum": "2"}, why=WHY)
    assert await executor.execute(call) == OkEnvelope(data={"words": 3, "minimum": 2})
    refused = await executor.execute(ToolCall(id="c2", name="text.count", arguments={"text": "x"}))
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.code == "MISSING_WHY"


async def test_a_python_binding_to_a_file_beside_the_yaml_runs_async_functions_and_methods(
    tmp_path: Path,
) -> None:
    (tmp_path / "helpers.py").write_text(
        "class Greeter:\n    @staticmethod\n    async def greet(name):\n        return f'hello {name}'\n",
        encoding="utf-8",
    )
    source = write(
        tmp_path,
        """
greet:
  python: helpers.py:Greeter.greet
  requires_why: false
  input_schema: {properties: {name: string}, required: [name]}
""",
    )
    tool = load_tools(source).get("greet")
    assert tool is not None
    assert tool.is_async
    envelope = await Executor([tool]).execute(ToolCall(id="c1", name="greet", arguments={"name": "Ada"}))
    assert envelope == OkEnvelope(data="hello Ada")


async def test_an_mcp_server_entry_is_kept_and_calls_get_a_clear_envelope(tmp_path: Path) -> None:
    text = """
custom_tools:
  - name: "video.extract_frames"
    mcp_server: "video-tools"
    description: "Extract frames from video"
    input_schema:
      properties:
        video_path: string
        timestamps: array
        why: string
      required: [video_path, timestamps, why]
"""
    tools = load_tools(write(tmp_path, text))
    (spec,) = tools.specs()
    assert spec.metadata == {"mcp_server": "video-tools"}
    assert specs_from_yaml(dump_yaml([spec])) == [spec]
    call = ToolCall(
        id="c1", name="video.extract_frames", arguments={"video_path": "a.mp4", "timestamps": [1]}, why=WHY
    )
    envelope = await Executor(tools).execute(call)
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "MCP_UNAVAILABLE"
    assert not envelope.error.recoverable
    assert "video-tools" in envelope.error.message
    assert envelope.error.suggestion


async def test_a_definition_without_a_binding_stays_declared_only(tmp_path: Path) -> None:
    tool = load_tools(write(tmp_path, "tool: {name: note, requires_why: false}")).get("note")
    assert tool is not None
    assert tool.function is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tool: {name: t, python: no_colon_here}", "python must be 'module:function'"),
        ("tool: {name: t, python: 'no_such_module_xyz:f'}", "cannot import no_such_module_xyz"),
        ("tool: {name: t, python: 'broken.py:f'}", r"cannot import broken.py \(SyntaxError"),
        ("tool: {name: t, python: 'json:no_such_function'}", "has no function 'no_such_function'"),
        ("tool: {name: t, python: 'json:dumps', command: [ls]}", "bound twice"),
    ],
)
def test_bad_bindings_are_user_errors_naming_the_fix(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n", encoding="utf-8")
    with pytest.raises(UserError, match=message):
        load_tools(write(tmp_path, text))


def test_a_python_binding_declaring_no_restriction_runs_in_process(tmp_path: Path) -> None:
    text = "tool: {name: t, python: 'json:dumps', sandbox: {network: true, timeout_ms: 500}}"
    tool = load_tools(write(tmp_path, text)).get("t")
    assert tool is not None
    assert tool.function is json.dumps


async def test_an_mcp_server_entry_that_says_how_to_reach_it_calls_the_servers_tool(tmp_path: Path) -> None:
    server = Path(__file__).parents[1] / "mcp" / "sdk_server.py"
    text = f"""
custom_tools:
  - name: "calc.sum"
    mcp_server: {{command: "{sys.executable} {server}", tool: add}}
    requires_why: false
    description: "Add two integers"
    input_schema:
      properties:
        a: integer
        b: integer
      required: [a, b]
"""
    tools = load_tools(write(tmp_path, text))
    executor = Executor(tools)
    assert await executor.execute(
        ToolCall(id="c1", name="calc.sum", arguments={"a": 2, "b": 5})
    ) == OkEnvelope(data={"total": 7})
    refused = await executor.execute(ToolCall(id="c2", name="calc.sum", arguments={"a": "x", "b": 5}))
    assert isinstance(refused, ErrorEnvelope)
    assert refused.error.code == "INVALID_ARGS"  # the YAML's own schema, checked before the server is asked
    from tether.mcp import MCPToolset

    MCPToolset.close_all()


def test_an_mcp_server_entry_with_neither_command_nor_url_is_a_user_error(tmp_path: Path) -> None:
    text = "tool: {name: t, mcp_server: {tool: x}, requires_why: false}"
    with pytest.raises(UserError, match="mcp_server takes either command"):
        load_tools(write(tmp_path, text))


def test_loading_an_mcp_server_entry_starts_no_server_and_loads_no_sdk(tmp_path: Path) -> None:
    path = write(tmp_path, 'tool: {name: t, mcp_server: {command: "no-such-server"}, requires_why: false}')
    code = f"import sys; from tether.tools import load_tools; load_tools({str(path)!r}); print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"  # the server starts on the first call, the SDK is imported then
