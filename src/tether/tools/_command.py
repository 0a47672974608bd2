"""Command tools: a YAML tool bound to an argv template, run in `tether.sandbox` under its declared policy.

    command: [wc, -w, --, "{path}"]
    sandbox: {network: false, filesystem: ["workspace/**:ro"], timeout_ms: 5000}

No shell ever reads the template or the values: each element is one argv element, and a `{name}` in it is
replaced by that argument's value (strings as given, other values as JSON), so a value can neither split
into more arguments nor run anything. A whole-element value starting with `-` is refused before a literal
`--` (it would be read as an option: argument injection). An absent optional argument takes its schema
default, or its element is left out. `{{` and `}}` are literal braces.

The policy is the sandbox's: `network` shares the host's network or not at all; `filesystem` says what of
the workspace the command sees: nothing (the default: an empty, private, size-capped folder), `workspace/**` (all of it,
writable, at /workspace), or read-only folders (`workspace/**:ro`, `workspace/data/**:ro`, ...), mounted
at their own path, where the command starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, cast

import pydantic_core

from tether.exceptions import ToolError, UserError
from tether.sandbox import Sandbox, SandboxLimits, result_data, run_for_tool
from tether.types import ErrorCode, ToolSpec

__all__ = ["CommandTemplate", "Mounts", "command_function"]

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|[{}]")


def command_function(spec: ToolSpec, template: Any, workspace: Path, where: str) -> Callable[..., Any]:
    """The function that runs `spec`'s command template in a sandbox holding it to `spec.sandbox`.

    Raises:
        UserError: the template or the filesystem patterns are malformed.
    """
    argv = CommandTemplate(template, spec.input_schema.get("properties", {}), where)
    mounts = Mounts.parse(spec.sandbox.filesystem, where)
    root = workspace.resolve()
    network = spec.sandbox.network
    timeout_s = (
        spec.sandbox.timeout_ms / 1000 if spec.sandbox.timeout_ms is not None else SandboxLimits().timeout_s
    )
    limits = SandboxLimits(timeout_s=timeout_s)

    def run(**arguments: Any) -> dict[str, Any]:
        command = argv.render(arguments)
        binds = mounts.read_only_paths(root)
        # without the writable workspace: a private tmpfs that dies with the run, whatever the command left
        sandbox = Sandbox(root if mounts.writable else None, network=network, limits=limits, ro_binds=binds)
        cwd = str(root) if binds else "."  # read-only folders are where they are on the host
        return result_data(run_for_tool(sandbox, command, cwd=cwd, timeout_s=timeout_s))

    return run


class CommandTemplate:
    """An argv template; `render` fills it with one call's arguments, refusing values that would be unsafe."""

    def __init__(self, template: Any, properties: Mapping[str, Any], where: str):
        if isinstance(template, str):
            raise UserError(
                f'{where}: command must be a list of arguments, not a shell line: e.g. [wc, -w, --, "{{path}}"]. '
                "No shell runs it; each element is one argument."
            )
        elements = cast("list[Any]", template) if isinstance(template, list) else []
        if not elements or not all(isinstance(e, str) for e in elements):
            raise UserError(f"{where}: command must be a non-empty list of strings, not {template!r}.")
        self.parts: list[list[str]] = [_parse(str(element), where) for element in elements]
        self.defaults: dict[str, Any] = {
            name: cast("dict[str, Any]", p).get("default")
            for name, p in properties.items()
            if isinstance(p, dict)
        }
        named = {str(n) for parts in self.parts for n in parts if isinstance(n, _Name)}
        unknown = sorted(named - set(properties))
        if unknown:
            raise UserError(
                f"{where}: command uses {', '.join(f'{{{n}}}' for n in unknown)}, which input_schema does not "
                f"declare (it has {sorted(properties) or 'no properties'})."
            )
        self.options_end = next((i for i, parts in enumerate(self.parts) if parts == ["--"]), len(self.parts))
        if self.parts[0] and isinstance(self.parts[0][0], _Name):
            raise UserError(f"{where}: the program (command's first element) must be fixed, not an argument.")

    def render(self, arguments: Mapping[str, Any]) -> list[str]:
        """The argv for one call.

        Raises:
            ToolError: INVALID_ARGS for a value that cannot be passed safely.
        """
        argv: list[str] = []
        for index, parts in enumerate(self.parts):
            pieces: list[str] = []
            for part in parts:
                value = arguments.get(part, self.defaults.get(part)) if isinstance(part, _Name) else part
                if value is None:
                    break  # an absent optional argument leaves its whole element out
                pieces.append(value if isinstance(value, str) else pydantic_core.to_json(value).decode())
            else:
                element = "".join(pieces)
                if "\x00" in element:
                    raise ToolError(
                        ErrorCode.INVALID_ARGS, "an argument holds a NUL byte, which no command can take"
                    )
                # a string the model chose heading an argument could name an option (argument injection)
                opens = isinstance(parts[0], _Name) and isinstance(arguments.get(parts[0]), str)
                if opens and index < self.options_end and element.startswith("-"):
                    raise ToolError(
                        ErrorCode.INVALID_ARGS,
                        f"{parts[0]}={element!r} would be read as an option by the command",
                        suggestion="Give a value that does not start with '-' (e.g. ./-name for a file).",
                    )
                argv.append(element)
        return argv


class _Name(str):
    """A placeholder in a template element (a plain `str` part is literal text)."""

    __slots__ = ()


def _parse(element: str, where: str) -> list[str]:
    parts: list[str] = []
    position = 0
    for match in _TOKEN.finditer(element):
        literal = element[position : match.start()]
        token = match.group(0)
        position = match.end()
        if token in ("{{", "}}"):
            parts.append(literal + token[0])
        elif match.group(1) is not None:
            parts += [literal, _Name(match.group(1))]
        else:
            raise UserError(
                f"{where}: unmatched {token!r} in command element {element!r}; write {{{{ or }}}} for a brace."
            )
    parts.append(element[position:])
    return [p for p in parts if p or isinstance(p, _Name)] or [""]


@dataclass(frozen=True, slots=True)
class Mounts:
    """What of the workspace a command sees, from `sandbox.filesystem` patterns."""

    writable: bool = False
    """All of the workspace, writable, at /workspace."""
    read_only: tuple[str, ...] = ()
    """Folders of the workspace, relative (`""` for all of it), mounted read-only at their own path."""

    @classmethod
    def parse(cls, patterns: Sequence[str], where: str) -> Mounts:
        writable, read_only = False, list[str]()
        for pattern in patterns:
            path, ro = (pattern[:-3], True) if pattern.endswith(":ro") else (pattern, False)
            relative = _relative(path, pattern, where)
            if not ro and relative:
                raise UserError(
                    f"{where}: sandbox.filesystem {pattern!r}: only the whole workspace can be writable "
                    f"(workspace/**); mark a folder read-only with :ro ({pattern}:ro)."
                )
            if ro:
                read_only.append(relative)
            else:
                writable = True
        if writable and read_only:
            raise UserError(
                f"{where}: sandbox.filesystem makes the whole workspace writable (workspace/**), so its :ro "
                "entries would not hold; keep one of the two."
            )
        return cls(writable, tuple(read_only))

    def read_only_paths(self, root: Path) -> list[Path]:
        """The host folders to mount read-only, checked now: each must still be a folder inside `root`
        reached through no symbolic link (something that shares the workspace could have planted one)."""
        paths: list[Path] = []
        for relative in self.read_only:
            path = root.joinpath(relative)
            if not os.path.lexists(path):
                continue  # nothing there yet: nothing to show
            if path.resolve() != path or not path.is_dir():
                raise ToolError(
                    ErrorCode.PERMISSION_DENIED,
                    f"workspace/{relative} is not a plain folder of the workspace (a link or a file)",
                    recoverable=False,
                    suggestion="Tell the user: the tool's folder was replaced by a link, so it was not mounted.",
                )
            paths.append(path)
        return paths


def _relative(path: str, pattern: str, where: str) -> str:
    parts = PurePosixPath(path).parts
    if parts[-1:] == ("**",):
        parts = parts[:-1]
    if not parts or parts[0] != "workspace" or any(p in ("..", ".", "") or "*" in p for p in parts[1:]):
        raise UserError(
            f"{where}: sandbox.filesystem {pattern!r} is not a workspace path; use workspace/** (all of it, "
            "writable), workspace/**:ro (read-only) or workspace/<folder>/**:ro."
        )
    return "/".join(parts[1:])
