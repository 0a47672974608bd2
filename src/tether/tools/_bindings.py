"""A YAML tool bound to what runs it: a Python callable, a command in the sandbox, or an MCP server.

One key of a definition says which (seed 001 §7 names `mcp_server`; `python` and `command` are tether's):

    python: mypkg.text:count_words        # module:function, or helpers.py:count_words beside the YAML file
    command: [wc, -w, "{path}"]           # run in tether.sandbox; each {argument} is one argv element
    mcp_server: {command: "uvx mcp-server-time", tool: get_current_time}   # or {url: https://.../mcp}

An `mcp_server` that says how to reach the server (a `command`, or a `url`: streamable HTTP, or legacy SSE
with `transport: sse`) runs the server's tool named `tool` (default: this tool's name) through the `mcp`
extra; the server starts on the first call and is shared by every tool that names it the same way. One
that gives only the server's name (as MOOLLM's examples do) is kept, and calls answer MCP_UNAVAILABLE.

A definition with none of them stays declared-only. A `python` callable whose definition declares a
restriction (`sandbox.network: false`, or `sandbox.filesystem` patterns) runs in a fresh interpreter in
the OS sandbox, held to it as a command is; one that declares none runs in tether's process, as `@tool`
functions do.
"""

from __future__ import annotations

import importlib
import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from tether.exceptions import ToolError, UserError
from tether.tools._tool import Tool
from tether.types import ToolSpec

__all__ = ["BINDING_KEYS", "bind"]

BINDING_KEYS = ("python", "command", "mcp_server")


def bind(spec: ToolSpec, *, base: Path, workspace: Path | None, source: str = "YAML") -> Tool[..., Any]:
    """`spec` as a tool that runs, when its definition names an implementation; declared-only otherwise.

    Args:
        spec: A definition read from YAML; the binding is in its metadata.
        base: Where relative paths in the definition start (the YAML file's folder).
        workspace: The folder command tools see at `workspace/` (default: the current directory).
        source: Where the definition came from, for error messages.

    Raises:
        UserError: the binding is malformed, cannot be imported, or cannot honour the declared sandbox.
    """
    given = [key for key in BINDING_KEYS if spec.metadata.get(key) is not None]
    if not given:
        return Tool(spec)
    where = f"{source}: tool {spec.name!r}"
    if len(given) > 1:
        raise UserError(f"{where} is bound twice ({' and '.join(given)}); keep one of them.")
    value = spec.metadata[given[0]]
    match given[0]:
        case "python":
            return Tool(spec, _python_function(spec, value, base, workspace, where))
        case "command":
            # imported on use: the sandbox (ctypes, seccomp) adds ~15 ms to `import tether.tools` otherwise
            from tether.tools._command import command_function

            return Tool(spec, command_function(spec, value, workspace or Path.cwd(), where))
        case _:
            if isinstance(value, dict):
                # imported on use: the MCP SDK is an optional extra
                from tether.tools._mcp_binding import mcp_function

                return Tool(spec, mcp_function(spec, cast("dict[str, Any]", value), where))
            return Tool(spec, _mcp_unavailable(spec.name, value))


def _python_function(
    spec: ToolSpec, ref: Any, base: Path, workspace: Path | None, where: str
) -> Callable[..., Any]:
    if not isinstance(ref, str) or ":" not in ref:
        raise UserError(
            f"{where}: python must be 'module:function' (e.g. mypkg.text:count_words) or "
            f"'file.py:function' beside the YAML file, not {ref!r}."
        )
    declared = spec.sandbox.model_fields_set
    if "filesystem" in declared or ("network" in declared and not spec.sandbox.network):
        # a declared restriction (even `filesystem: []`, no files): the function runs where it holds
        # (imported on use, as for commands)
        from tether.tools._python_sandbox import sandboxed_python

        return sandboxed_python(spec, ref, base, workspace or Path.cwd(), where)
    module_name, _, attribute = ref.rpartition(":")
    try:
        if module_name.endswith(".py"):  # a file beside the YAML: run as a module of its own
            found: Any = _Namespace(runpy.run_path(str(base / module_name)))
        else:
            found = importlib.import_module(module_name)
    except Exception as e:  # the user's module failing to import is theirs to fix: one clear line
        raise UserError(f"{where}: cannot import {module_name} ({type(e).__name__}: {e}).") from e
    for part in attribute.split("."):
        found = getattr(found, part, None)
    if not callable(found):
        raise UserError(f"{where}: {module_name} has no function {attribute!r} (python: {ref}).")
    return found


def _mcp_unavailable(name: str, server: Any) -> Callable[..., Any]:
    async def unavailable(**_: Any) -> None:
        raise ToolError(
            "MCP_UNAVAILABLE",
            f"{name} is served by the MCP server {server!r}, but its definition does not say how to reach it",
            recoverable=False,
            suggestion="Do not call it again in this run; do without it, or tell the user to give its mcp_server "
            "a command or url in the tool's definition.",
        )

    return unavailable


class _Namespace:
    """A file's top-level names as attributes, so `file.py:Class.method` resolves as `module:...` does."""

    def __init__(self, names: dict[str, Any]):
        self.__dict__.update(names)
