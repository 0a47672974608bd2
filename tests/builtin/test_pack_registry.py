from pathlib import Path

import pytest

import tether.builtin
from tether.builtin import PackConfig, ToolPack, _registry, build_tools, get_pack, packs, register_pack
from tether.exceptions import UserError
from tether.tools import Toolset, tool


def test_built_in_packs_are_registered_through_the_public_extension_point() -> None:
    assert {"fs", "search", "exec", "memory", "web"} <= set(packs())
    assert all(isinstance(pack, ToolPack) for pack in packs().values())


def test_build_tools_configures_packs_per_agent(tmp_path: Path) -> None:
    config = PackConfig(roots=(tmp_path,))
    names = list(build_tools(["fs", "search", "exec", "memory", "web"], config).tools())
    assert names == [
        "fs.ls", "fs.read", "fs.append", "fs.patch", "fs.write", "fs.mkdir", "fs.copy",
        "search.lexical",
        "terminal.run", "terminal_execute", "python.exec", "js.exec",
        "memory.summarize", "memory.advise",
        "wget", "api_call",
    ]  # fmt: skip


def test_a_third_party_pack_registers_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_registry, "_PACKS", dict(_registry._PACKS))  # pyright: ignore[reportPrivateUsage]

    @tool(name="weather.now", side_effects="none")
    def now(city: str) -> str:
        return f"sunny in {city}"

    pack = register_pack(ToolPack("weather", lambda config: Toolset(now)))
    assert get_pack("weather") is pack
    assert list(build_tools(["weather"], PackConfig()).tools()) == ["weather.now"]
    with pytest.raises(UserError, match="already registered"):
        register_pack(ToolPack("weather", lambda config: Toolset()))


def test_an_unknown_pack_names_the_available_ones() -> None:
    with pytest.raises(UserError, match="no tool pack named 'nope'; available: "):
        get_pack("nope")


def test_code_running_tools_need_a_workspace() -> None:
    with pytest.raises(UserError, match="need a workspace"):
        build_tools(["exec"], PackConfig())


def test_the_public_api_is_exported() -> None:
    assert sorted(tether.builtin.__all__) == tether.builtin.__all__
    for name in tether.builtin.__all__:
        assert getattr(tether.builtin, name) is not None
