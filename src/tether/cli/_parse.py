"""`tether parse`: read tool calls out of a model output on stdin and print the result as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from tether.dialects import dialect_names, parse
from tether.exceptions import UserError

__all__ = ["register"]


def _load_tools(path: Path | None) -> Any:
    if path is None:
        return None
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        return yaml.safe_load(text)
    return json.loads(text)


def register(app: typer.Typer) -> None:
    @app.command("parse")
    def parse_command(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        dialect: Annotated[
            str, typer.Option("--dialect", "-d", help="The tool-call format (or 'auto').")
        ] = "hermes",
        tools: Annotated[
            Path | None,
            typer.Option("--tools", help="Tool definitions: JSON or YAML (OpenAI, Anthropic, Gemini, BFCL)."),
        ] = None,
    ) -> None:
        """Parse a model output read from stdin; prints calls, content, reasoning and errors as JSON."""
        if dialect not in dialect_names():
            raise typer.BadParameter(f"unknown dialect {dialect!r}; known: {', '.join(dialect_names())}")
        try:
            result = parse(sys.stdin.read(), dialect, _load_tools(tools))
        except UserError as e:
            raise typer.BadParameter(str(e)) from None
        typer.echo(result.model_dump_json(indent=2))
