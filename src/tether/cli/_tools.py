from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated

import typer
from rich.table import Table

from tether.cli._errors import console, fail
from tether.tools import AbstractToolset, dump_yaml, export_tools, load_tools, model_schema

__all__ = ["register"]

Source = Annotated[str, typer.Argument(help="A module path (pkg.tools) or a .py, .yaml, .ts or .json file.")]


class Format(StrEnum):
    openai = "openai"
    anthropic = "anthropic"
    gemini = "gemini"
    yaml = "yaml"
    json_schema = "json-schema"


def _print_list(toolset: AbstractToolset) -> None:
    table = Table("name", "side effects", "why", "description", box=None)
    for spec in toolset.specs():
        summary = spec.description.strip().splitlines()[0] if spec.description.strip() else ""
        table.add_row(spec.name, spec.side_effects, "required" if spec.requires_why else "", summary)
    console().print(table)


def register(app: typer.Typer) -> None:
    tools = typer.Typer(help="Inspect and convert tool definitions from any source.", no_args_is_help=True)

    @tools.command("list")
    def list_(  # pyright: ignore[reportUnusedFunction]
        source: Annotated[
            str | None, typer.Argument(help="A module path (pkg.tools) or a .py, .yaml, .ts or .json file.")
        ] = None,
        mcp: Annotated[
            str | None, typer.Option("--mcp", help='An MCP server\'s command, e.g. "uvx mcp-server-time".')
        ] = None,
    ) -> None:
        """One line per tool: name, side effects, whether `why` is required, and its description.

        With --mcp, the tools of an MCP server as tether sees them (it is started, listed and stopped).
        """
        if (source is None) == (mcp is None):
            fail('give a tool source or --mcp "command", e.g. tether tools list --mcp "uvx mcp-server-time".')
        if mcp is not None:
            from tether.mcp import MCPToolset  # the optional MCP SDK, imported only when asked for

            with MCPToolset.stdio(mcp) as server:
                _print_list(server)
            return
        assert source is not None
        _print_list(load_tools(source))

    @tools.command("show")
    def show(source: Source, name: Annotated[str, typer.Argument(help="The tool's name or alias.")]) -> None:  # pyright: ignore[reportUnusedFunction]
        """A tool's full spec as JSON."""
        toolset = load_tools(source)
        found = toolset.get(name)
        if found is None:
            close = ", ".join(toolset.closest(name)) or ", ".join(toolset.names())
            fail(f"no tool named {name!r} in {source}; did you mean: {close}?")
        typer.echo(found.spec.model_dump_json(indent=2))

    @tools.command("export")
    def export(  # pyright: ignore[reportUnusedFunction]
        source: Source,
        format: Annotated[Format, typer.Option("--format", "-f", help="The target format.")] = Format.openai,
        strict: Annotated[
            bool, typer.Option(help="OpenAI strict mode: closed objects, all fields required.")
        ] = False,
    ) -> None:
        """All tools in another format: OpenAI, Anthropic or Gemini tool JSON, MOOLLM YAML, or JSON Schema."""
        toolset = load_tools(source)
        if format is Format.yaml:
            typer.echo(dump_yaml(toolset.specs()), nl=False)
            return
        if format is Format.json_schema:
            out: object = {spec.name: model_schema(spec) for spec in toolset.specs()}
        else:
            out = export_tools(toolset, format.value, strict=strict)
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False))

    app.add_typer(tools, name="tools")
