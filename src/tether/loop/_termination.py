"""How a run ends: one policy per agent, plus limits that always apply."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from tether._literals import loads
from tether.exceptions import UserError
from tether.tools import ArgumentValidator
from tether.types import JsonSchema

__all__ = [
    "EndTurn",
    "FinalResponse",
    "Limits",
    "NoCalls",
    "Termination",
    "core_tool_names",
    "termination_for",
]


@dataclass(frozen=True, slots=True)
class NoCalls:
    """The run ends when a model turn makes no tool call (the native default)."""


@dataclass(frozen=True, slots=True)
class EndTurn:
    """The run ends only when the model calls `end_turn` (seed 000); `send_chat` and `say` never end it.

    A turn with no call at all is answered with a reminder to call `end_turn`.
    """

    reminder: str = "Continue, or call end_turn to hand control back to the user."


@dataclass(frozen=True, slots=True)
class FinalResponse:
    """The run ends with JSON in a required format once the model calls `finalResponse()` (seed 003).

    The format requirements go back under the same system prompt; the model's answer is validated against
    `schema` and re-asked up to `attempts` times. A turn with no call at all is answered with `reminder`,
    as the seed's loop sends the model back to work until it calls `finalResponse()`.
    """

    schema: JsonSchema | type[Any] | None = None
    """The format of the final answer: a JSON Schema (the output is the JSON value), or a type pydantic can
    validate, e.g. a `BaseModel` subclass or `list[int]` (the output is a validated instance); None accepts
    any JSON value."""
    instructions: str = "Respond now with only the final answer as JSON, with no tool calls and no prose."
    attempts: int = 3
    reminder: str = (
        "Call finalResponse() when you have everything you need: you will then be told the exact format of "
        "the final answer. Do not answer before calling it."
    )

    def json_schema(self) -> JsonSchema | None:
        """The format as a JSON Schema, as the model is shown it."""
        if self.schema is None or isinstance(self.schema, dict):
            return self.schema
        return TypeAdapter(self.schema).json_schema()

    def request(self) -> str:
        """What the model is asked once it calls `finalResponse()`: the instructions and the format."""
        schema = self.json_schema()
        if schema is None:
            return self.instructions
        return (
            f"{self.instructions}\nIt must match this JSON Schema:\n{json.dumps(schema, ensure_ascii=False)}"
        )

    def read(self, text: str) -> tuple[Any, str | None]:
        """The model's final answer, read as JSON (a code fence around it is fine) and checked against the
        format, or the problem to send back."""
        body = text.strip()
        if body.startswith("```"):
            body = body.split("\n", 1)[-1].rsplit("```", 1)[0]
        parsed = loads(body)
        if not parsed.ok:
            return None, f"Your final answer is not valid JSON ({parsed.error})."
        value, problems = self.check(parsed.value)
        if problems is not None:
            return None, f"Your final answer does not match the required format: {problems}."
        return value, None

    def check(self, value: Any) -> tuple[Any, str | None]:
        """The final answer (validated, or an instance of the type), or the problem to send back."""
        if self.schema is None:
            return value, None
        if isinstance(self.schema, dict):
            checked = ArgumentValidator(self.schema, tool_name="the final answer").validate(value)
            if checked.problems:
                return None, "; ".join(str(p) for p in checked.problems)
            return checked.arguments, None
        try:
            return TypeAdapter(self.schema).validate_python(value), None
        except ValidationError as e:
            return None, "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'the answer'}: {error['msg']}"
                for error in e.errors(include_url=False)
            )


Termination = NoCalls | EndTurn | FinalResponse


@dataclass(frozen=True, slots=True)
class Limits:
    """Limits that end any run, each with its own terminal reason; they hold inside a model turn too."""

    max_iterations: int = 20
    """Model turns per run (`max_iterations`)."""
    max_tool_calls: int = 100
    """Tool calls per run (`max_tool_calls`): calls beyond it, even in the turn that reaches it, are refused
    with `QUOTA_EXCEEDED` rather than run, and the run ends."""
    max_tokens: int | None = None
    """Approximate model output tokens per run, counted as characters / 4 (`max_tokens`); a model still
    streaming when it is reached is stopped (a runaway generation is not waited for)."""
    max_wall_time_s: float | None = None
    """Seconds per run (`max_wall_time`): the model or tools still working when it is up are cancelled."""
    retry_budget: int = 3
    """Refusals one tool may collect in a run before the run stops (`retry_budget`)."""

    def exceeded(self, *, iterations: int, tool_calls: int, chars: int, elapsed_s: float) -> str | None:
        """The reason the run must stop now, if a limit is reached."""
        if iterations >= self.max_iterations:
            return "max_iterations"
        if tool_calls >= self.max_tool_calls:
            return "max_tool_calls"
        if self.max_tokens is not None and chars / 4 >= self.max_tokens:
            return "max_tokens"
        if self.max_wall_time_s is not None and elapsed_s >= self.max_wall_time_s:
            return "max_wall_time"
        return None


def termination_for(termination: Termination | None, output_type: Any) -> Termination:
    """The policy an agent runs under: `output_type` means `FinalResponse` with it as the format."""
    if output_type is None:
        return termination or NoCalls()
    if termination is None:
        return FinalResponse(schema=output_type)
    if isinstance(termination, FinalResponse) and termination.schema is None:
        return dataclasses.replace(termination, schema=output_type)
    raise UserError(
        "Agent(output_type=...) ends the run with FinalResponse(schema=output_type): leave termination out, "
        f"or give FinalResponse(...) without a schema (got termination={termination!r})."
    )


def core_tool_names(termination: Termination) -> tuple[str, ...]:
    """The core tools a policy needs the model to have (seed 000's end_turn and kin, seed 003's finalResponse)."""
    if isinstance(termination, EndTurn):
        return ("send_chat", "say", "open_url", "end_turn")
    if isinstance(termination, FinalResponse):
        return ("finalResponse",)
    return ()
