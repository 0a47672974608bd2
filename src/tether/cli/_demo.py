from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from tether.cli._errors import user_errors
from tether.tools import load_tools
from tether.types import ToolCall

__all__ = ["register"]

BAD_CALL = {"days": "3", "unit": "kelvin"}


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(  # pyright: ignore[reportUnusedFunction]
        directory: Annotated[Path, typer.Argument(help="A folder of definitions of one tool.")] = Path(
            "examples/weather"
        ),
    ) -> None:
        """Load one tool defined four ways (Python, YAML, TypeScript, OpenAI JSON) and refuse one bad call."""
        console = Console()
        console.print(f"The same call, {json.dumps(BAD_CALL)}, to get_weather defined four ways:\n")
        table = Table("definition", "refusal a model sees", "coercions recorded", show_lines=True)
        with user_errors():
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
