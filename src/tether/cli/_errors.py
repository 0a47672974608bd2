"""How the command line prints and fails: text as it is, and one line on stderr instead of a traceback.

Text from models, files, tools and users can hold `[...]` or `:name:`, which Rich would read as markup or
emoji codes (a `[/x]` in a path crashed the error message meant to show it; `tether[anthropic]` printed as
`tether`). So every console here prints text literally, and styles are given explicitly (`Text.assemble`).
Every command runs under `Commands.invoke`, the one place where exceptions become exit codes:
`UserError` and `SandboxUnavailable` (the host lacks what the user asked for; the message names the fix) ->
its message and exit 2, `ModelError` -> its message and exit 1, anything else -> one line
saying it is a bug, exit 1, with the traceback only under `tether --debug` or `TETHER_DEBUG=1`.
"""

from __future__ import annotations

from typing import Any, NoReturn, cast

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from tether.exceptions import ModelError, SandboxUnavailable, UserError

__all__ = ["Commands", "console", "fail", "leaves", "report"]

BUG_HINT = (
    "This is a bug in tether: please report it with the traceback "
    "(run again with `tether --debug ...` or TETHER_DEBUG=1 to see it)."
)


def console(*, stderr: bool = False) -> Console:
    """A console that prints text literally: no markup, no emoji codes, no highlighting, and no line breaks
    of its own in text (a piped error stays one line; tables still fit the terminal)."""
    return Console(stderr=stderr, markup=False, emoji=False, highlight=False, soft_wrap=True)


def report(message: str, *, label: str = "error:", hint: str | None = None) -> None:
    """One red `error:` line on stderr (plus a hint line); the message is printed exactly as given."""
    err = console(stderr=True)
    err.print(Text.assemble((label, "bold red"), " ", message))
    if hint:
        err.print(Text(f"  {hint}", style="yellow"))


def fail(message: str, *, code: int = 2, hint: str | None = None) -> NoReturn:
    """Report `message` and end the command with exit status `code` (2: bad input, 1: the run failed)."""
    report(message, hint=hint)
    raise typer.Exit(code)


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or `error` itself."""
    if isinstance(error, BaseExceptionGroup):
        inner = cast("tuple[BaseException, ...]", error.exceptions)  # pyright: ignore[reportUnknownMemberType]
        return [leaf for e in inner for leaf in leaves(e)]
    return [error]


class Commands(TyperGroup):
    """The root command group: runs a command and turns whatever it raises into an exit code."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (
            typer.Exit,
            typer.Abort,
            BrokenPipeError,
        ):  # typer ends these quietly (`| head` closed the pipe)
            raise
        except Exception as e:
            if type(e).__module__.startswith(("click", "typer")):  # usage errors: typer prints them itself
                raise
            found = leaves(e)
            for kind, code in ((UserError, 2), (SandboxUnavailable, 2), (ModelError, 1)):
                known = next((leaf for leaf in found if isinstance(leaf, kind)), None)
                if known is not None:
                    fail(str(known), code=code)
            if ctx.params.get("debug"):
                raise
            leaf = found[0]
            report(f"tether failed unexpectedly: {type(leaf).__name__}: {leaf}", hint=BUG_HINT)
            raise typer.Exit(1) from e
