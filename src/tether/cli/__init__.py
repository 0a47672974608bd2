"""The `tether` command line (Typer + Rich). Each sub-command lives in its own module with a `register`."""

from __future__ import annotations

import typer

from tether.cli import _audit, _chat, _corpus, _demo, _parse, _run, _sandbox, _schema, _tools

__all__ = ["app", "main"]

app = typer.Typer(
    name="tether",
    help="Let any LLM use tools safely and fast, in any tool-call format.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_tools.register(app)
_schema.register(app)
_demo.register(app)
_run.register(app)
_chat.register(app)
_parse.register(app)
_corpus.register(app)
_audit.register(app)
_sandbox.register(app)


def main() -> None:
    app()
