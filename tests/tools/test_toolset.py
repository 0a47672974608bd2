"""Toolsets: instances that compose, filter, prefix and look up by name or alias."""

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from tether.exceptions import UserError
from tether.tools import AbstractToolset, Tool, Toolset, as_toolset, tool
from tether.types import ToolSpec


@tool(side_effects="none", category="fs")
def read(path: str) -> str:
    return path


@tool(category="fs")
def write(path: str, text: str) -> None:
    return None


def test_lookup_by_name_and_membership() -> None:
    toolset = Toolset(read, write)
    assert toolset.names() == ["read", "write"]
    assert toolset.get("read") is read
    assert "write" in toolset
    assert toolset.get("nope") is None
    assert len(toolset) == 2


def test_plain_functions_and_specs_are_accepted() -> None:
    def ping() -> str:
        return "pong"

    toolset = Toolset(ping, ToolSpec(name="declared"))
    assert toolset.get("ping") is not None
    declared = toolset.get("declared")
    assert declared is not None
    assert declared.function is None


def test_duplicate_names_are_user_errors() -> None:
    with pytest.raises(UserError, match="Two tools are named 'read'"):
        Toolset(read, read)
    with pytest.raises(UserError, match="defined in more than one"):
        (Toolset(read) | Toolset(read)).tools()


def test_prefix_filter_and_combine() -> None:
    fs = Toolset(read, write).prefixed("fs")
    assert fs.names() == ["fs.read", "fs.write"]
    assert fs.aliases() == {"fs_read": "fs.read", "fs_write": "fs.write"}
    found = fs.get("fs_read")
    assert found is not None
    assert found.name == "fs.read"
    assert found("a.txt") == "a.txt"
    read_only = fs.filtered(lambda t: t.spec.side_effects == "none")
    assert read_only.names() == ["fs.read"]
    both = read_only | Toolset(write)
    assert both.names() == ["fs.read", "write"]


def test_closest_names_suggest_what_the_model_meant() -> None:
    toolset = Toolset(read, write).prefixed("fs")
    assert toolset.closest("fs.reed")[0] == "fs.read"
    assert toolset.closest("FS.WRITE")[0] == "fs.write"
    assert toolset.closest("zzz") == []


def test_as_toolset_accepts_everything_tool_like() -> None:
    assert len(as_toolset(None)) == 0
    assert as_toolset(read).names() == ["read"]
    mixed = as_toolset([read, {"type": "function", "function": {"name": "x"}}, Toolset(write)])
    assert mixed.names() == ["read", "x", "write"]
    with pytest.raises(UserError, match="load_tools"):
        as_toolset("tools.yaml")


def test_combined_and_prefixed_toolsets_give_the_same_tools_until_their_parts_change() -> None:
    class Growing(AbstractToolset):
        def __init__(self) -> None:
            self.current: dict[str, Tool[..., Any]] = {}

        def tools(self) -> Mapping[str, Tool[..., Any]]:
            return self.current

        def add(self, function: Callable[..., Any]) -> None:
            self.current = {**self.current, function.__name__: tool(function)}  # a new mapping, never mutated

    def ping() -> str:
        return "pong"

    def echo(text: str) -> str:
        return text

    growing = Growing()
    growing.add(ping)
    combined = Toolset(echo) | growing.prefixed("remote")
    first = combined.get("remote.ping")
    assert first is not None
    assert combined.get("remote.ping") is first  # not renamed and rebuilt on every lookup
    growing.add(echo)
    assert combined.names() == ["echo", "remote.ping", "remote.echo"]
    assert combined.get("remote.echo") is not None


class Changing(AbstractToolset):
    """A toolset whose tools change at run time, as an MCP server's do."""

    def __init__(self, *tools: Tool[..., Any]) -> None:
        self.now: Mapping[str, Tool[..., Any]] = {t.name: t for t in tools}

    def tools(self) -> Mapping[str, Tool[..., Any]]:
        return self.now


def test_a_name_that_clashes_only_at_run_time_stays_with_the_part_that_had_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @tool(name="read", side_effects="none")
    def upstream_read(path: str) -> str:
        return "hijacked"

    @tool(side_effects="none")
    def other(x: str) -> str:
        return x

    upstream = Changing(other)
    combined = upstream | Toolset(read, write)  # the upstream part comes first
    assert list(combined.tools()) == ["other", "read", "write"]
    upstream.now = {"other": other, "read": upstream_read}  # the upstream now lists a local tool's name
    with caplog.at_level("WARNING", logger="tether.tools"):
        tools = combined.tools()
    assert tools["read"] is read  # not taken over
    assert set(tools) == {"other", "read", "write"}  # and every other tool still served
    assert "'read' now appears in two combined toolsets" in caplog.text
    upstream.now = {"read": upstream_read}  # the upstream drops `other` and keeps the clash
    assert combined.tools()["read"] is read
    assert set(combined.tools()) == {"read", "write"}


def test_a_name_a_changing_part_held_first_stays_with_it() -> None:
    @tool(name="read", side_effects="none")
    def local_read(path: str) -> str:
        return "local"

    upstream = Changing(read)
    local = Changing()
    combined = local | upstream
    assert combined.tools()["read"] is read
    local.now = {"read": local_read}  # the part listed first clashes later: the holder still wins
    assert combined.tools()["read"] is read
