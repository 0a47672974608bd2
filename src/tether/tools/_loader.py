"""Tools from wherever they are: Python objects, modules, and definition files of every format."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from tether.exceptions import UserError
from tether.tools._bindings import bind
from tether.tools._providers import specs_from_json
from tether.tools._tool import Tool
from tether.tools._toolset import AbstractToolset, Toolset
from tether.tools._typescript import specs_from_typescript
from tether.tools._yaml import specs_from_yaml
from tether.types import ToolSpec

__all__ = ["ToolsLike", "as_toolset", "load_tools"]

ToolsLike = (
    AbstractToolset
    | Tool[..., Any]
    | ToolSpec
    | Mapping[str, Any]
    | Callable[..., Any]
    | Iterable[Any]
    | None
)
"""Anything that names tools: a toolset, a tool, a spec, tool JSON in any format, a function, or a list of them."""


def as_toolset(tools: ToolsLike) -> AbstractToolset:
    """A toolset from anything `ToolsLike`; `None` is the empty toolset."""
    if tools is None:
        return Toolset()
    if isinstance(tools, AbstractToolset):
        return tools
    if isinstance(tools, Tool | ToolSpec) or (callable(tools) and not isinstance(tools, type)):
        return Toolset(cast("Any", tools))
    if isinstance(tools, Mapping):
        return Toolset(*specs_from_json(tools))
    if isinstance(tools, str | bytes):
        raise UserError("Tools given as a string: use load_tools(path) for a file, or pass parsed JSON.")
    items: list[Any] = []
    for item in cast("Iterable[Any]", tools):
        if isinstance(item, Mapping):
            items.extend(specs_from_json(item))
        elif isinstance(item, AbstractToolset):
            items.extend(item.tools().values())
        else:
            items.append(item)
    return Toolset(*items)


def load_tools(source: str | Path, *, workspace: str | Path | None = None) -> Toolset:
    """Tools from a file (`.yaml`/`.yml`, `.ts`, `.json`, `.py`) or an importable module path (`pkg.tools`).

    A Python source contributes every `Tool` and `AbstractToolset` defined at its top level. A YAML tool
    bound to an implementation (`python:`, `command:` or `mcp_server:`) runs; others are declared only.

    Args:
        source: The file or module.
        workspace: The folder YAML command tools see as `workspace/` (default: the current directory).

    Raises:
        UserError: the source is empty, missing, unreadable, or fails to import (its own error is named).
    """
    if not str(source).strip():
        raise UserError(
            "No tool source given: name a file ending in .py, .yaml, .ts or .json, or a module path "
            "(e.g. `myapp.tools`)."
        )
    path = Path(source)
    if path.suffix in (".yaml", ".yml", ".ts", ".json", ".py") and not path.is_file():
        raise UserError(f"No such tool definition file: {path}")
    match path.suffix:
        case ".yaml" | ".yml":
            specs = specs_from_yaml(path.read_text(encoding="utf-8"), source=str(path))
            where = None if workspace is None else Path(workspace)
            return Toolset(
                *(bind(spec, base=path.parent, workspace=where, source=str(path)) for spec in specs)
            )
        case ".ts":
            return Toolset(*specs_from_typescript(path.read_text(encoding="utf-8"), source=str(path)))
        case ".json":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as e:
                raise UserError(f"{path}: not valid JSON: {e}") from e
            return Toolset(*specs_from_json(data))
        case ".py":
            return _tools_in(_import_file(path), str(path))
        case _:
            return _tools_in(_import_module(str(source)), str(source))


def _import_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except (ModuleNotFoundError, ValueError, TypeError) as e:  # not found, or not a module path at all
        raise UserError(
            f"Cannot import {name!r} ({e}). Give a module path importable from here (e.g. `myapp.tools`) "
            "or a file ending in .py, .yaml, .ts or .json."
        ) from e
    except Exception as e:  # the module's own code failed
        raise UserError(f"Importing {name!r} failed: {_failure(e)}") from e


def _import_file(path: Path) -> ModuleType:
    name = f"_tether_tools_{abs(hash(path.resolve()))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"Cannot load Python file {path}.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # a syntax error, a missing import, an exception at its top level
        del sys.modules[name]
        raise UserError(f"Importing {path} failed: {_failure(e)}") from e
    return module


def _failure(error: Exception) -> str:
    """An import's failure in one line: a syntax error with its line, anything else with its type."""
    if isinstance(error, SyntaxError):
        return f"{error.msg} at line {error.lineno}: {(error.text or '').strip()}"
    return f"{type(error).__name__}: {error}"


def _tools_in(module: ModuleType, source: str) -> Toolset:
    found: list[Tool[..., Any]] = []
    for value in vars(module).values():
        if isinstance(value, Tool):
            found.append(cast("Tool[..., Any]", value))
        elif isinstance(value, AbstractToolset):
            found.extend(value.tools().values())
    unique = list({id(t): t for t in found}.values())
    if not unique:
        raise UserError(
            f"{source} defines no tools: decorate functions with @tether.tool or define a Toolset."
        )
    return Toolset(*unique)
