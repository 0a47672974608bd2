"""`Tool`: a ToolSpec, optionally bound to the Python function that implements it."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, ParamSpec, TypeVar, cast

from pydantic import TypeAdapter, ValidationError

from tether.exceptions import UserError
from tether.tools._validation import ArgumentValidator, Problem
from tether.types import Provenance, ToolCall, ToolSpec

__all__ = ["ContextSource", "Tool", "ToolContext", "ValidatedCall"]

P = ParamSpec("P")
_validated = cast("Callable[..., Any]", tuple.__new__)  # pyright: ignore[reportUnknownMemberType]
"""A NamedTuple made from its values without its Python-level `__new__` (~0.1 µs)."""
R = TypeVar("R")

ContextSource = Callable[[str | None], str]
"""What a tool adds to the model's context before each model turn, given the run's session id (`""`: nothing).
E.g. the memory pack's working set: the files `memory.advise` marked hot."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may learn about the call it is serving; declare a parameter of this type to receive it."""

    call: ToolCall
    principal: str | None = None
    scopes: frozenset[str] = frozenset()
    session_id: str | None = None
    deps: Any = None
    """Whatever the application passes to its tools (a database handle, an HTTP client, ...)."""


class ValidatedCall(NamedTuple):
    """A call checked against its tool: the call as it will run (coerced, `why` split out) and any problems."""

    call: ToolCall
    problems: Sequence[Problem] = ()
    values: dict[str, Any] | None = None
    """The function's keyword arguments as typed Python values (function tools only, when valid)."""

    @property
    def ok(self) -> bool:
        return not self.problems


class Tool(Generic[P, R]):
    """A tool: its spec, and the function that runs it when tether has one (declared-only tools have none).

    A `Tool` made by `@tool` is still callable as the function it wraps.
    """

    __slots__ = (
        "__dict__",
        "_arguments",
        "_properties",
        "_strict",
        "_validator",
        "context_parameter",
        "context_source",
        "function",
        "inline",
        "is_async",
        "spec",
    )

    def __init__(
        self,
        spec: ToolSpec,
        function: Callable[P, R] | None = None,
        *,
        arguments: TypeAdapter[dict[str, Any]] | None = None,
        context_parameter: str | None = None,
        context_source: ContextSource | None = None,
        inline: bool = False,
    ):
        self.spec = spec
        self.function = function
        self.context_parameter = context_parameter
        self.context_source = context_source
        """Text the loop adds to the model's system prompt before each model turn (see `ContextSource`)."""
        self._arguments = arguments
        self._strict: Callable[..., dict[str, Any]] | None = None
        """`arguments`' own validator's `validate_python`, once built (`validate_call`'s fast path)."""
        self._properties: dict[str, Any] = spec.input_schema.get("properties", {})
        self._validator = ArgumentValidator(spec.input_schema, tool_name=spec.name)
        self.is_async: bool = function is not None and inspect.iscoroutinefunction(function)
        """Whether calling the function returns an awaitable (checked once: the executor asks per call)."""
        if inline and (function is None or self.is_async or spec.sandbox.isolation == "process"):
            raise UserError(
                f"Tool {spec.name!r}: inline=True is for a sync function that returns at once, run on the "
                "event loop; an async function already runs there, and a declared-only or process-isolated "
                "tool cannot."
            )
        self.inline = inline
        """A sync function run on the event loop itself, without the hop to a worker thread (`@tool`'s
        `inline`): for functions known never to block; the timeout cannot stop one."""
        if function is not None:
            self.__dict__["__wrapped__"] = function
            self.__dict__["__doc__"] = function.__doc__

    @property
    def name(self) -> str:
        return self.spec.name

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.function is None:
            raise UserError(f"Tool {self.name!r} is declared only and has no Python function to call.")
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        kind = "function" if self.function else "declared"
        return f"Tool({self.name!r}, {kind})"

    def with_spec(self, spec: ToolSpec) -> Tool[P, R]:
        """The same implementation under another spec (e.g. a prefixed name)."""
        return Tool(
            spec,
            self.function,
            arguments=self._arguments,
            context_parameter=self.context_parameter,
            context_source=self.context_source,
            inline=self.inline,
        )

    def compile(self) -> None:
        """Compile the argument validator now; raises `UserError` if the input schema is not valid JSON Schema."""
        self._validator.compile()

    def validate_call(self, call: ToolCall) -> ValidatedCall:
        """Check a call's arguments, applying and recording safe coercions; never raises on model output.

        Names the tool does not take are refused (with the closest one it does), unless its schema allows
        others; so are arguments JSON cannot hold (see `ArgumentValidator.not_json`).
        """
        arguments = call.arguments
        why = call.why
        if "why" in arguments and "why" not in self._properties:
            arguments = dict(arguments)
            given = arguments.pop("why")
            why = why if why is not None else (given if isinstance(given, str) else str(given))
        not_json = self._validator.not_json(arguments)
        if not_json:  # no schema check or coercion can make sense of the rest
            return ValidatedCall(call.model_copy(update={"why": why}) if why != call.why else call, not_json)
        unknown = self._validator.unknown_names(arguments)
        if not unknown and self._arguments is not None and arguments is call.arguments:
            try:  # fast path: valid as given, with no coercion at all
                strict = self._strict
                if strict is None:  # the adapter builds its validator on first use, if it deferred it
                    values = self._arguments.validate_python(arguments, strict=True)
                    self._strict = self._arguments.validator.validate_python
                else:  # the adapter's own validator, without its wrapper's checks of options (~0.25 µs)
                    values = strict(arguments, strict=True)
                return _validated(ValidatedCall, (call, (), values))  # `ValidatedCall(call, (), values)`
            except ValidationError:
                pass  # maybe valid after a JSON-level reading or a safe coercion: take the full path
        checked = self._validator.validate(arguments)
        problems: Sequence[Problem] = checked.problems
        if unknown:  # they replace the schema's own word on them (`additionalProperties: false`), if any
            kept = [
                p
                for p in problems
                if not (p.kind == "additionalProperties" and any(u.path.startswith(p.path) for u in unknown))
            ]
            problems = sorted([*unknown, *kept], key=lambda p: p.path)
        values: dict[str, Any] | None = None
        if not problems and self._arguments is not None:
            values, problems = _typed_values(self._arguments, checked.arguments)
        update: dict[str, Any] = {}
        if checked.arguments is not call.arguments:
            update["arguments"] = checked.arguments
        if why != call.why:
            update["why"] = why
        if checked.coercions:
            previous = call.provenance or Provenance(dialect="unknown")
            update["provenance"] = previous.model_copy(
                update={"repairs": previous.repairs + tuple(checked.coercions)}
            )
        return ValidatedCall(call.model_copy(update=update) if update else call, problems, values)

    def call_arguments(self, validated: ValidatedCall, context: ToolContext | None = None) -> dict[str, Any]:
        """Keyword arguments for `self.function`, from a valid call, with the context injected if declared."""
        if not validated.ok:
            raise UserError(
                f"call_arguments() needs a valid call; {self.name} has problems: {validated.problems}"
            )
        kwargs = dict(validated.values if validated.values is not None else validated.call.arguments)
        if self.context_parameter is not None:
            kwargs[self.context_parameter] = context
        return kwargs


def _typed_values(
    adapter: TypeAdapter[dict[str, Any]], arguments: dict[str, Any]
) -> tuple[dict[str, Any] | None, list[Problem]]:
    try:
        return adapter.validate_python(arguments), []
    except ValidationError as e:
        return None, [
            Problem(_loc_path(err["loc"]), err["msg"], _pydantic_kind(err["type"]))
            for err in e.errors(include_url=False)
        ]


def _pydantic_kind(error_type: str) -> str:
    return "required" if error_type == "missing" else error_type


def _loc_path(loc: tuple[int | str, ...]) -> str:
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out
