"""The `tether` command line (Typer + Rich). Each sub-command lives in its own module with a `register`."""

from __future__ import annotations

from typing import Annotated

import typer

import tether
from tether.cli import (
    _audit,
    _auth,
    _chat,
    _corpus,
    _demo,
    _knowledge,
    _mcp,
    _parse,
    _run,
    _sandbox,
    _schema,
    _serve,
    _tools,
)
from tether.cli._errors import Commands

__all__ = ["app", "main"]

app = typer.Typer(
    name="tether",
    cls=Commands,
    help="Let any LLM use tools safely and fast, in any tool-call format.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"tether {tether.__version__}")
        raise typer.Exit()


@app.callback()
def _options(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print tether's version."),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", envvar="TETHER_DEBUG", help="Show the traceback of an unexpected error (a bug)."
        ),
    ] = False,
) -> None:
    """Let any LLM use tools safely and fast, in any tool-call format."""


_tools.register(app)
_schema.register(app)
_demo.register(app)
_run.register(app)
_chat.register(app)
_parse.register(app)
_corpus.register(app)
_audit.register(app)
_sandbox.register(app)
_mcp.register(app)
_auth.register(app)
_serve.register(app)
_knowledge.register(app)


def main() -> None:
    app()
