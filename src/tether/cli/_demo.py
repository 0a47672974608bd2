from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from tether.cli._errors import console as plain_console
from tether.cli._run import replay_cassette
from tether.tools import load_tools
from tether.types import ToolCall

__all__ = ["register"]

BAD_CALL = {"days": "3", "unit": "kelvin"}


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        examples: Annotated[Path, typer.Argument(help="The examples folder.")] = Path("examples"),
    ) -> None:
        """Replay a recorded agent session, then refuse one bad call to a tool defined four ways.

        The session runs through the real loop, parser, executor and tools; the bad call goes to one tool
        defined in Python, YAML, TypeScript and OpenAI JSON."""
        console = plain_console()
        cassette = examples / "sessions" / "find-weather.jsonl"
        console.rule("1. A recorded session, replayed")
        console.print(
            f"No API key and no network: the model's outputs come from {cassette}; the dialect parser,\n"
            "the executor (guards, journal) and the fs and search tools run for real.\n"
        )
        replay_cassette(cassette, console)
        console.print()
        console.rule("2. One tool, four definitions, one refusal")
        _four_definitions(examples / "weather", console)


def _four_definitions(directory: Path, console: Console) -> None:
    console.print(f"The same call, {json.dumps(BAD_CALL)}, to get_weather defined four ways:\n")
    table = Table("definition", "refusal a model sees", "coercions recorded", show_lines=True)
    for path in sorted(directory.iterdir()):
        if path.suffix not in (".py", ".yaml", ".ts", ".json"):
            continue
        tool = load_tools(path).get("get_weather")
        if tool is None:
            continue
        checked = tool.validate_call(ToolCall(id="call_1", name="get_weather", arguments=BAD_CALL))
        refusal = "\n".join(str(p) for p in checked.problems) or "(valid)"
        coerced = "\n".join(f"{r.path}: {r.message}" for r in checked.call.repairs) or "-"
        table.add_row(path.name, refusal, coerced)
    console.print(table)
