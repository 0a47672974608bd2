"""`@tool`: a ToolSpec from a Python function's signature, type hints and docstring."""

from __future__ import annotations

import contextlib
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, NotRequired, ParamSpec, Required, TypeVar, cast, get_type_hints, overload

import docstring_parser
from pydantic import Field, PydanticSchemaGenerationError, PydanticUserError, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticSerializationError, to_jsonable_python
from typing_extensions import TypedDict

from tether.exceptions import UserError
from tether.tools._tool import Tool, ToolContext
from tether.types import (
    TOOL_NAME_PATTERN,
    JsonSchema,
    RateLimit,
    SandboxPolicy,
    SideEffects,
    ToolExample,
    ToolSpec,
)

__all__ = ["tool"]

P = ParamSpec("P")
R = TypeVar("R")


class _ToolSchema(GenerateJsonSchema):
    """Compact schemas for models: no auto-generated `title` on every field."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


@overload
def tool(function: Callable[P, R], /) -> Tool[P, R]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    category: str | None = None,
    side_effects: SideEffects = "mutating",
    requires_why: bool = False,
    scopes: Iterable[str] = (),
    sandbox: SandboxPolicy | None = None,
    examples: Iterable[ToolExample | Mapping[str, Any]] = (),
    priority: int = 0,
    rate_limit: RateLimit | None = None,
    sequential: bool = False,
    idempotency_fields: Iterable[str] = (),
    inline: bool = False,
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
def tool(
    function: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    category: str | None = None,
    side_effects: SideEffects = "mutating",
    requires_why: bool = False,
    scopes: Iterable[str] = (),
    sandbox: SandboxPolicy | None = None,
    examples: Iterable[ToolExample | Mapping[str, Any]] = (),
    priority: int = 0,
    rate_limit: RateLimit | None = None,
    sequential: bool = False,
    idempotency_fields: Iterable[str] = (),
    inline: bool = False,
) -> Tool[P, R] | Callable[[Callable[P, R]], Tool[P, R]]:
    """Make a tool of a sync or async function.

    The input schema comes from the type hints (Annotated/Field constraints, Literal, Enum, Optional,
    defaults, nested pydantic models, TypedDict, dataclasses), descriptions from the docstring (Google,
    NumPy or Sphinx style). A parameter annotated `ToolContext` receives the call's context instead.

    Args:
        function: The function, when used as a bare `@tool`.
        name: The tool's name; defaults to the function's name.
        description: Defaults to the docstring's description.
        category: A grouping such as `fs` or `search` (seed 001).
        side_effects: `none`, `idempotent` or `mutating` (the safe default).
        requires_why: Whether calls must state their intent in `why` (seed 001 §4).
        scopes: Scopes the caller must hold (seed 002).
        sandbox: Network, filesystem, timeout and isolation policy.
        examples: Example calls, as `ToolExample`s or `{"input": ..., "output": ..., "why": ...}` dicts.
        priority: Default call priority; higher runs first (seed 000).
        rate_limit: At most `calls` per `per_seconds` per principal.
        sequential: Never run concurrently with other calls.
        idempotency_fields: Argument names that identify a repeated request.
        inline: Run a sync function on the event loop itself instead of in a worker thread, saving the hop
            (~90 µs a call on a busy 2-vCPU machine). Only for functions that return at once and never
            block (no I/O, no sleeping, no long computation): while one runs, every other run in the
            process waits, and its timeout cannot stop it. An async function already runs on the loop.
    """

    def decorate(func: Callable[P, R]) -> Tool[P, R]:
        tool_name = name or func.__name__
        if not re.match(TOOL_NAME_PATTERN, tool_name):
            raise UserError(
                f"@tool on {func.__qualname__}: {tool_name!r} is not a valid tool name; use letters, digits and "
                "_ . : - (starting with a letter or _), at most 128 characters, e.g. @tool(name='fs.read')."
            )
        schema, adapter, context_parameter, doc = _describe(func)
        try:
            spec = ToolSpec(
                name=tool_name,
                description=description if description is not None else _description(doc),
                category=category,
                input_schema=schema,
                output_schema=_output_schema(func),
                sandbox=sandbox or SandboxPolicy(),
                examples=tuple(
                    e if isinstance(e, ToolExample) else ToolExample.model_validate(e) for e in examples
                ),
                scopes=tuple(scopes),
                side_effects=side_effects,
                requires_why=requires_why,
                priority=priority,
                rate_limit=rate_limit,
                sequential=sequential,
                idempotency_fields=tuple(idempotency_fields),
            )
        except ValueError as e:
            raise UserError(f"@tool on {func.__qualname__}: {e}") from e
        unknown = set(spec.idempotency_fields) - set(schema.get("properties", {}))
        if unknown:
            raise UserError(
                f"@tool on {func.__qualname__}: idempotency_fields {sorted(unknown)} are not parameters."
            )
        if inline and inspect.iscoroutinefunction(func):
            raise UserError(
                f"@tool on {func.__qualname__}: inline=True is for sync functions (an async one already runs "
                "on the event loop); leave it out."
            )
        if inline and spec.sandbox.isolation == "process":
            raise UserError(
                f"@tool on {func.__qualname__}: inline=True runs the function on the event loop, "
                'sandbox isolation="process" in a child process: choose one.'
            )
        return Tool(spec, func, arguments=adapter, context_parameter=context_parameter, inline=inline)

    return decorate(function) if function is not None else decorate


def _describe(
    func: Callable[..., Any],
) -> tuple[JsonSchema, TypeAdapter[dict[str, Any]], str | None, docstring_parser.Docstring]:
    """The input schema, a validator producing the function's keyword arguments, and the context parameter.

    Arguments validate as a TypedDict: an argument the model leaves out stays out, so the function's own
    default applies, and no parameter name can clash with a model class's attributes. A `**kwargs`
    parameter lets the model pass other names too (the schema's `additionalProperties`, of its type).
    """
    where = f"@tool on {getattr(func, '__qualname__', func)!r}"
    try:
        hints = get_type_hints(func, include_extras=True)
    except NameError as e:
        raise UserError(
            f"{where}: a type hint cannot be resolved ({e}); import the type at module level."
        ) from e
    doc = docstring_parser.parse(inspect.getdoc(func) or "")
    param_docs = {p.arg_name: p.description for p in doc.params if p.description}
    fields: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    context_parameter: str | None = None
    extra_items: Any = None
    for param in inspect.signature(func).parameters.values():
        if param.kind is param.VAR_KEYWORD:  # the tool takes other names too, with values of this type
            extra_items = hints.get(param.name, Any)
            continue
        if param.kind is param.VAR_POSITIONAL:
            raise UserError(f"{where}: *args cannot be described to a model; name each parameter.")
        if param.kind is param.POSITIONAL_ONLY:
            raise UserError(
                f"{where}: positional-only parameter {param.name!r}; tools are called by keyword."
            )
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext or annotation == ToolContext | None:
            context_parameter = param.name
            continue
        if param.name in param_docs:
            annotation = Annotated[annotation, Field(description=param_docs[param.name])]
        if param.default is param.empty:
            fields[param.name] = Required[annotation]
        else:
            fields[param.name] = NotRequired[annotation]
            defaults[param.name] = param.default
    try:
        name = f"{func.__name__}_arguments"
        arguments: Any = (
            TypedDict(name, fields)  # pyright: ignore[reportArgumentType] - built from the signature
            if extra_items is None
            else TypedDict(name, fields, extra_items=extra_items)  # pyright: ignore[reportArgumentType]
        )
        adapter = cast("TypeAdapter[dict[str, Any]]", TypeAdapter(arguments))
        schema = adapter.json_schema(schema_generator=_ToolSchema)
    except (PydanticUserError, PydanticSchemaGenerationError, TypeError) as e:
        raise UserError(f"{where}: a parameter's type cannot be described as JSON Schema: {e}") from e
    schema.pop("title", None)
    properties: dict[str, Any] = schema.setdefault("properties", {})
    for name, default in defaults.items():
        with contextlib.suppress(PydanticSerializationError):  # a default JSON cannot show is not shown
            properties[name]["default"] = to_jsonable_python(default)
    for name in properties:  # keep the signature's order, with descriptions last as pydantic writes them
        properties[name] = dict(sorted(properties[name].items(), key=lambda kv: kv[0] == "description"))
    return schema, adapter, context_parameter, doc


def _description(doc: docstring_parser.Docstring) -> str:
    parts = [doc.short_description, doc.long_description]
    return "\n\n".join(p for p in parts if p)


def _output_schema(func: Callable[..., Any]) -> JsonSchema | None:
    annotation = get_type_hints(func).get("return", Any)
    if annotation in (Any, None, type(None)):
        return None
    try:
        schema = TypeAdapter(annotation).json_schema(schema_generator=_ToolSchema)
    except (PydanticUserError, TypeError):
        return None  # a return type pydantic cannot describe only loses the output schema, not the tool
    schema.pop("title", None)
    return schema
