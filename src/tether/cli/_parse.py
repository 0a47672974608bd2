"""`tether parse`: read tool calls out of a model output on stdin and print the result as JSON."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tether.dialects import dialect_names, parse
from tether.exceptions import UserError
from tether.tools import load_tools

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    @app.command("parse")
    def parse_command(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        dialect: Annotated[
            str, typer.Option("--dialect", "-d", help="The tool-call format (or 'auto').")
        ] = "hermes",
        tools: Annotated[
            Path | None,
            typer.Option(
                "--tools",
                help="Tool definitions (.py, .yaml, .ts, or .json in OpenAI, Anthropic, Gemini, MCP or BFCL "
                "form): positional arguments get their names and text values their types.",
            ),
        ] = None,
    ) -> None:
        """Parse a model output read from stdin; prints calls, content, reasoning and errors as JSON."""
        if dialect not in dialect_names():
            raise typer.BadParameter(f"unknown dialect {dialect!r}; known: {', '.join(dialect_names())}")
        toolset = load_tools(tools) if tools is not None else None
        result = parse(_stdin_text(), dialect, toolset)
        typer.echo(result.model_dump_json(indent=2))


def _stdin_text() -> str:
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(
            f"stdin is not UTF-8 text (byte {data[e.start]:#04x} at offset {e.start}): tether parse reads "
            "model output as UTF-8; convert it first, e.g. `iconv -f latin1 -t utf-8`."
        ) from e
