"""A `python:` binding that declares a network or filesystem restriction runs in the sandbox, held to it.

The function is called in a fresh interpreter inside `tether.sandbox`, which sees only what it needs to
run (the interpreter, the environment's packages, the function's own module, tether) read-only, plus the
workspace as its `sandbox.filesystem` says (see `_command`). Arguments go in as JSON on stdin; the result
comes back as JSON on the interpreter's original stdout, while anything the function prints goes to stderr.
`ToolError` and `NeedsInput` raised inside come back as themselves; anything else as `ToolCrashed`
naming what it raised and carrying the function's traceback.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pydantic_core

from tether.exceptions import NeedsInput, ToolCrashed, ToolError, UserError
from tether.sandbox import Sandbox, SandboxLimits, run_for_tool
from tether.tools._command import Mounts
from tether.types import ToolSpec

__all__ = ["sandboxed_python"]

_TETHER = Path(__file__).resolve().parents[1]
"""tether's own package, mounted so that a sandboxed tool can raise ToolError or NeedsInput."""

# Runs in the sandbox: python -I -c _RUNNER <sys.path as JSON> <module or file> <attribute>
_RUNNER = """
import json, os, sys
reply = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # the function's own output goes to stderr; stdout carries the reply alone
sys.path[:0] = json.loads(sys.argv[1])
try:
    target, attribute = sys.argv[2], sys.argv[3].split(".")
    if target.endswith(".py"):
        import runpy
        found = runpy.run_path(target)[attribute.pop(0)]
    else:
        import importlib
        found = importlib.import_module(target)
    for part in attribute:
        found = getattr(found, part)
    value = found(**json.loads(sys.stdin.read()))
    if hasattr(value, "__await__"):  # an async function
        import asyncio
        value = asyncio.run(value)
    answer = {"ok": value}
except BaseException as e:
    kind = type(e).__name__
    if kind == "ToolError" and type(e).__module__.startswith("tether"):
        answer = {"tool_error": [e.code, e.message, e.recoverable, e.suggestion]}
    elif kind == "NeedsInput" and type(e).__module__.startswith("tether"):
        answer = {"needs": e.needs}
    else:
        import traceback
        answer = {"raised": kind, "traceback": traceback.format_exc()}
reply.write(json.dumps(answer, default=repr))
reply.close()
"""


def sandboxed_python(spec: ToolSpec, ref: str, base: Path, workspace: Path, where: str) -> Callable[..., Any]:
    """The function that calls `ref` (`module:attribute` or `file.py:attribute`) in the sandbox.

    Raises:
        UserError: the module cannot be found, or the filesystem patterns are malformed.
    """
    mounts = Mounts.parse(spec.sandbox.filesystem, where)
    target, _, attribute = ref.rpartition(":")
    code, entry, target_arg = _code(target, base, where)
    runtime = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), _TETHER}
    search = [*([entry] if entry else []), str(_TETHER.parent)]
    root = workspace.resolve()
    timeout_s = (
        spec.sandbox.timeout_ms / 1000 if spec.sandbox.timeout_ms is not None else SandboxLimits().timeout_s
    )
    limits = SandboxLimits(timeout_s=timeout_s)
    interpreter = sys.executable  # in a virtual environment, its own python: the environment's packages

    def run(**arguments: Any) -> Any:
        binds = mounts.read_only_paths(root)
        sandbox = Sandbox(
            root if mounts.writable else None,  # None: a private tmpfs that dies with the run
            network=spec.sandbox.network,
            limits=limits,
            ro_binds=[*runtime, *([code] if code else []), *binds],
        )
        argv = [interpreter, "-I", "-c", _RUNNER, json.dumps(search), target_arg, attribute]
        stdin = pydantic_core.to_json(arguments).decode()
        result = run_for_tool(
            sandbox, argv, cwd=str(root) if binds else ".", timeout_s=timeout_s, stdin=stdin
        )
        return _answer(result.stdout, result.stderr, result.exit_code)

    return run


def _code(target: str, base: Path, where: str) -> tuple[Path | None, str | None, str]:
    """What the sandbox needs to import `target`: the folder to mount (`None`: the interpreter has it), the
    sys.path entry that finds it there, and the target as the runner names it. A single-file module is
    mounted alone, from a private copy: a file cannot be mounted by itself, and its folder may hold what
    the tool must not see. A package is mounted as its folder.
    """
    if target.endswith(".py"):
        path = (base / target).resolve()
        if not path.is_file():
            raise UserError(f"{where}: no such Python file {path} (python: {target}:...).")
        folder = _private_copy(path)
        return folder, str(folder), str(folder / path.name)
    try:
        found = importlib.util.find_spec(target.split(".")[0])
    except (ImportError, ValueError) as e:
        raise UserError(f"{where}: cannot find module {target!r} ({e}).") from e
    if found is None:
        raise UserError(f"{where}: cannot find module {target!r}; is it importable from here?")
    if found.submodule_search_locations:  # a package: its folder, found from its parent
        folder = Path(next(iter(found.submodule_search_locations))).resolve()
        return folder, str(folder.parent), target
    if found.origin is None or not Path(found.origin).is_file():  # built into the interpreter
        return None, None, target
    folder = _private_copy(Path(found.origin).resolve())
    return folder, str(folder), target


def _private_copy(path: Path) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="tether-code-"))
    folder.chmod(0o755)  # the sandbox's unprivileged uid reads it
    shutil.copy(path, folder / path.name)
    (folder / path.name).chmod(0o644)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _answer(stdout: str, stderr: str, exit_code: int) -> Any:
    try:
        answer: Any = json.loads(stdout)
    except ValueError:
        raise ToolCrashed(
            "SandboxedInterpreterExited",
            f"the tool's sandboxed interpreter exited with code {exit_code} without replying; stderr:\n"
            f"{stderr[-2000:]}",
        ) from None
    if not isinstance(answer, dict):
        raise ToolCrashed("ProtocolError", f"the tool's sandboxed interpreter replied {stdout[:200]!r}")
    reply = cast("dict[str, Any]", answer)
    if "ok" in reply:
        return reply["ok"]
    if "tool_error" in reply:
        code, message, recoverable, suggestion = reply["tool_error"]
        raise ToolError(str(code), str(message), recoverable=bool(recoverable), suggestion=suggestion)
    if "needs" in reply:
        needs: Any = reply["needs"]
        raise NeedsInput(
            **(cast("dict[str, Any]", needs) if isinstance(needs, dict) and needs else {"input": True})
        )
    raise ToolCrashed(str(reply.get("raised")), str(reply.get("traceback")))
