"""The `exec` pack (seed 001 §3.3): terminal.run, python.exec, js.exec - and seed 000's terminal_execute.

Off by default (seed 000's autoexec): until an agent's configuration enables them, each refuses with
PERMISSION_DENIED. Enabled, commands and Python run in `tether.sandbox` (bubblewrap: no network, no
capabilities, an unprivileged uid, rlimits, a timeout that kills the whole tree); where bubblewrap is missing
they refuse with SANDBOX_UNAVAILABLE unless the configuration opted out explicitly. python.exec's directory
is a private tmpfs; its result comes back through the capped output, never read from files. JavaScript runs
in QuickJS (`tether[js]`), a fresh context per call, in pooled sandboxed worker processes that a timeout or
a cancelled call kills.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether.exceptions import ToolError
from tether.sandbox import SandboxLimits, result_data
from tether.tools import Toolset, tool
from tether.types import ErrorCode, SandboxPolicy

from ._js import run_js
from ._paths import Roots
from ._pyexec import run_python
from ._registry import PackConfig, ToolPack, register_pack
from ._runner import ExecSettings, program_hint, run_sandboxed

__all__ = ["EXEC_PACK", "exec_pack"]


def exec_pack(
    workspace: str | Path,
    *,
    enabled: bool = False,
    network: bool = False,
    limits: SandboxLimits | None = None,
    unsandboxed: bool = False,
) -> Toolset:
    """Code-running tools on one workspace; they refuse unless `enabled` (autoexec is off by default).

    Args:
        workspace: The directory commands see, writable, at /workspace.
        enabled: Turn code execution on for this agent.
        network: Give sandboxed code the network (off by default).
        limits: Resource limits; `SandboxLimits()` by default.
        unsandboxed: Run without bubblewrap where it is missing. This runs model-written code on the host.
    """
    root = Path(workspace)
    root.mkdir(parents=True, exist_ok=True)
    settings = ExecSettings(
        workspace=root,
        enabled=enabled,
        network=network,
        unsandboxed=unsandboxed,
        limits=limits or SandboxLimits(),
    )
    box = Roots([root])
    max_ms = int(settings.limits.timeout_s * 1000)
    policy = SandboxPolicy(network=network, filesystem=("workspace/**",), timeout_ms=max_ms + 5000)

    @tool(
        name="terminal.run",
        category="exec",
        side_effects="mutating",
        requires_why=True,
        sandbox=policy,
        examples=[
            {"input": {"cmd": ["pytest", "-q"], "cwd": "."}, "why": "Run the tests to verify the patch"}
        ],
    )
    def terminal_run(cmd: list[str], cwd: str = ".", timeout_ms: int = 30000) -> dict[str, Any]:
        """Run a command in the sandboxed workspace (no shell: pass the program and its arguments).

        Args:
            cmd: The program and its arguments, e.g. ["ls", "-la"].
            cwd: Working directory, relative to the workspace.
            timeout_ms: Wall-clock limit; the whole process tree is killed when it passes.
        """
        settings.check_enabled("terminal.run")
        if not cmd or not all("\x00" not in a for a in cmd):
            raise ToolError(
                ErrorCode.INVALID_ARGS, "cmd must be a non-empty list of strings", suggestion='["ls"]'
            )
        where = box.display(box.resolve(cwd, what="cwd"))
        result = run_sandboxed(settings, root, cmd, cwd=where, timeout_s=settings.timeout_s(timeout_ms))
        data = result_data(result)
        if result.exit_code == 1 and "execvp" in result.stderr and (hint := program_hint(cmd)):
            data["stderr"] = f"{result.stderr}({hint})\n"
        return data

    @tool(
        name="terminal_execute",
        category="exec",
        side_effects="mutating",
        requires_why=True,
        sandbox=policy,
        examples=[
            {"input": {"command": "ls -la | head", "timeout": 10000}, "why": "See what the build produced"}
        ],
    )
    def terminal_execute(command: str, timeout: int = 30000) -> dict[str, Any]:
        """Run a shell command line in the sandboxed workspace (seed 000's name for terminal.run).

        Args:
            command: A shell command line, run by `sh -c` inside the sandbox.
            timeout: Wall-clock limit in milliseconds.
        """
        settings.check_enabled("terminal_execute")
        result = run_sandboxed(settings, root, ["sh", "-c", command], timeout_s=settings.timeout_s(timeout))
        return result_data(result)

    @tool(
        name="python.exec",
        category="exec",
        side_effects="mutating",
        requires_why=True,
        sandbox=policy,
        examples=[
            {
                "input": {
                    "code": "import csv\nlen(list(csv.reader(open('data.csv'))))",
                    "files": {"data.csv": "a,b\n1,2\n"},
                },
                "output": {"return_value": 2},
                "why": "Count the rows before summarising them",
            }
        ],
    )
    def python_exec(
        code: str, files: dict[str, str] | None = None, timeout_ms: int = 60000
    ) -> dict[str, Any]:
        """Run Python code in a fresh sandboxed directory; the value of a final expression is returned.

        Args:
            code: Python source. Files it writes in its directory come back as artifacts (text up to 64 KB).
            files: Text files to put in its directory first, by relative path.
            timeout_ms: Wall-clock limit; the whole process tree is killed when it passes.
        """
        settings.check_enabled("python.exec")
        return run_python(settings, code, files or {}, timeout_s=settings.timeout_s(timeout_ms))

    @tool(
        name="js.exec",
        category="exec",
        side_effects="none",
        requires_why=True,
        sandbox=SandboxPolicy(timeout_ms=max_ms + 5000),
        examples=[
            {"input": {"code": "input.a + input.b", "input_json": {"a": 1, "b": 2}}, "output": {"result": 3}}
        ],
    )
    async def js_exec(code: str, input_json: Any = None, timeout_ms: int = 10000) -> dict[str, Any]:
        """Evaluate JavaScript in an isolate (no files, no network); `input` holds input_json.

        Args:
            code: JavaScript; the value of the last expression is the result. console.log lines are returned.
            input_json: Any JSON value, available to the code as `input`.
            timeout_ms: Time limit for the evaluation.
        """
        settings.check_enabled("js.exec")
        return await run_js(
            code, input_json, timeout_s=settings.timeout_s(timeout_ms), limits=settings.limits
        )

    return Toolset(terminal_run, terminal_execute, python_exec, js_exec)


def _build(config: PackConfig) -> Toolset:
    return exec_pack(
        config.exec_workspace,
        enabled=config.autoexec,
        network=config.network,
        limits=config.limits,
        unsandboxed=config.unsandboxed,
    )


EXEC_PACK = register_pack(
    ToolPack("exec", _build, "Code: terminal.run, python.exec, js.exec (off unless autoexec)")
)
