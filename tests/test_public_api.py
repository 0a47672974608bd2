"""The public API: what `tether` exports is sorted, importable, and includes every exception."""

import importlib
import inspect
import subprocess
import sys
from types import ModuleType

import pytest

import tether
import tether.exceptions
import tether.loop
import tether.mcp
import tether.models
import tether.serve
import tether.tools

PACKAGES = [tether, tether.tools, tether.loop, tether.models, tether.mcp, tether.serve]


@pytest.mark.parametrize("module", PACKAGES, ids=lambda m: m.__name__)
def test_all_is_sorted_and_every_name_resolves(module: ModuleType) -> None:
    names: list[str] = vars(module)["__all__"]
    assert names == sorted(names)
    for name in names:
        assert getattr(module, name) is not None


def test_every_exception_is_exported() -> None:
    exceptions = {
        name for name, value in vars(tether.exceptions).items()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == "tether.exceptions"
    }  # fmt: skip
    assert exceptions <= set(tether.__all__)


def test_unknown_attributes_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tether.nope  # noqa: B018 - the access is the test


def test_import_tether_loads_no_heavy_dependency() -> None:
    code = "import sys, tether; print(sorted(m for m in ('pydantic', 'yaml', 'jsonschema', 'typer', 'rich', 'sqlalchemy', 'fastapi', 'uvicorn', 'sse_starlette') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_agent_without_a_store_loads_neither_sqlalchemy_nor_a_provider_sdk() -> None:
    heavy = "('sqlalchemy', 'openai', 'anthropic', 'mcp', 'typer', 'rich')"
    code = (
        f"import sys; from tether import Agent, tool; print(sorted(m for m in {heavy} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_lazy_exports_are_the_real_objects() -> None:
    assert tether.tool is importlib.import_module("tether.tools").tool
    assert tether.ToolCall is importlib.import_module("tether.types").ToolCall
