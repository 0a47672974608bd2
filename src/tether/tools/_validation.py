"""Argument validation: one compiled validator per tool, problems in words a model can act on.

The fast path is a `fastjsonschema` function compiled once per tool (microseconds per valid call). Only when
it refuses do we ask `jsonschema` for *every* problem, apply the safe coercions (`"5"` -> 5 for an integer
parameter, `"true"` -> True, a JSON string -> the object or array the schema wants) and validate again.
Coercions are returned so the caller can record them on the call; unsafe conversions stay problems.
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import math
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import fastjsonschema

from tether.exceptions import UserError
from tether.tools._redact import REDACTED, redact
from tether.types import JsonSchema, Repair

if TYPE_CHECKING:
    from jsonschema import ValidationError

__all__ = ["MAX_DEPTH", "ArgumentValidator", "Problem", "describe_problems"]

_INTEGER = re.compile(r"^\s*-?\d+\s*$")
_MAX_COERCION_ROUNDS = 8
MAX_DEPTH = 32
"""How deeply a call's arguments may nest (objects and arrays); deeper is refused as `INVALID_ARGS`."""
_SECRET = "(a secret value, not shown)"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a call's arguments."""

    path: str
    """JSON path of the argument, e.g. `$.location.city`; `$` for the arguments object itself."""
    message: str
    kind: str = "invalid"
    """What failed, for code to act on: the JSON Schema keyword (`required`, `type`, `enum`, ...), or the
    pydantic error type for a function tool's own validators."""

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class Validated(NamedTuple):
    arguments: dict[str, Any]
    problems: Sequence[Problem] = ()
    coercions: Sequence[Repair] = ()


def describe_problems(tool_name: str, problems: Sequence[Problem]) -> str:
    """One message listing every problem, e.g. for an INVALID_ARGS envelope."""
    noun = "problem" if len(problems) == 1 else "problems"
    listed = "; ".join(str(p) for p in problems)
    return f"{len(problems)} {noun} with the arguments of {tool_name}: {listed}"


class ArgumentValidator:
    """Validates and safely coerces arguments against one tool's input JSON Schema."""

    def __init__(self, schema: JsonSchema, *, tool_name: str = "tool"):
        self.schema = schema
        self._tool_name = tool_name
        self._fast: Callable[[Any], Any] | None = None
        self._checker: Any = None  # a jsonschema validator, made on the first refusal
        self._shape = _shape(schema, schema, 0, {})

    def unknown_names(self, arguments: dict[str, Any]) -> list[Problem]:
        """A problem for each name the tool does not take, naming the closest one it does, at the top and
        inside objects the schema spells out (`$.location.cty`); none where the schema allows other names
        (`additionalProperties`, or an object it does not spell out)."""
        shape = self._shape
        if not shape.fields and (shape.known is None or arguments.keys() <= shape.known):
            return []  # the usual flat call: one set comparison
        problems: list[Problem] = []
        _unknown_in(arguments, shape, [], problems)
        return problems

    def not_json(self, arguments: dict[str, Any]) -> list[Problem]:
        """A problem for each part of the arguments JSON cannot hold (a key that is not a string, NaN or an
        infinity) and for nesting deeper than `MAX_DEPTH`: no schema or journal can take those."""
        for key, item in arguments.items():  # the usual flat call of strings and numbers costs one loop
            if type(key) is not str or type(item) in _CHECKED:
                problems: list[Problem] = []
                _not_json(arguments, "$", 1, problems)
                return problems
        return []

    def compile(self) -> None:
        """Compile the fast validator now rather than on the first call; raises `UserError` on a bad schema."""
        if self._fast is None:
            try:
                self._fast = _compiled(json.dumps(self.schema, sort_keys=True, default=str))
            except (fastjsonschema.JsonSchemaDefinitionException, ValueError, TypeError) as e:
                raise UserError(
                    f"The input schema of tool {self._tool_name!r} is not valid JSON Schema: {e}"
                ) from e

    def validate(self, arguments: dict[str, Any]) -> Validated:
        if self._fast is None:
            self.compile()
        assert self._fast is not None
        try:
            self._fast(arguments)
        except fastjsonschema.JsonSchemaValueException:
            return self._slow_path(arguments)
        return Validated(arguments)

    def _slow_path(self, arguments: dict[str, Any]) -> Validated:
        from jsonschema import Draft202012Validator

        checker = Draft202012Validator(self.schema)
        secret = _secret_paths(arguments, self.schema)
        coerced = arguments
        coercions: list[Repair] = []
        errors = []
        for _ in range(_MAX_COERCION_ROUNDS):
            errors: list[ValidationError] = list(checker.iter_errors(coerced))  # pyright: ignore[reportUnknownMemberType] - jsonschema's stub
            fixes = [fix for e in errors for fix in _safe_coercions(e)]
            if not fixes:
                break
            if coerced is arguments:
                coerced = copy.deepcopy(arguments)
            for path, before, after in fixes:
                _set_at(coerced, path, after)
                shown = (
                    f"a secret {_kind(before)} -> {_kind(after)}"
                    if secret(path)
                    else f"{_show(before)} -> {_show(after)}"
                )
                coercions.append(Repair(kind="coerced", message=shown, path=_json_path(path)))
        problems = _problems(errors, secret)
        if not errors:
            # jsonschema accepts what fastjsonschema (draft 7) refused: trust the stricter word once.
            try:
                self._fast(coerced) if self._fast else None
            except fastjsonschema.JsonSchemaValueException as e:
                problems = [Problem(_fast_path(e), _strip_name(e.message), str(e.rule or "invalid"))]
        return Validated(coerced, problems, coercions)


_COMPILING = threading.Lock()


@functools.lru_cache(maxsize=1024)
def _compiled(schema_json: str) -> Callable[[Any], Any]:
    """Tools that share a schema (renamed, prefixed, re-loaded) share one compiled validator."""
    with _COMPILING:  # compile() of generated code is not safe from several threads at once in CPython 3.11
        return _compile(schema_json)


def _compile(schema_json: str) -> Callable[[Any], Any]:
    # use_default=False: validation must never write defaults into the model's arguments.
    return fastjsonschema.compile(_draft7(json.loads(schema_json)), use_default=False)


def _keyword(error: ValidationError) -> str:
    """The JSON Schema keyword that failed, e.g. `type` (typed loosely by jsonschema)."""
    return cast("str", error.validator)


def _expected(error: ValidationError) -> Any:
    """The failed keyword's value in the schema, e.g. `["c", "f"]` for an `enum`."""
    return cast("Any", error.validator_value)


# ------------------------------------------------------------------------------------------- coercions

_NO_COERCION = object()


def _safe_coercions(error: ValidationError) -> list[tuple[list[str | int], Any, Any]]:
    """(path, before, after) for each value to coerce so that `error` goes away; empty if none is safe."""
    if _keyword(error) == "type":
        if not error.absolute_path:
            return []  # the value as a whole is of the wrong type: nothing to coerce in place
        wanted = _expected(error)
        for kind in [wanted] if isinstance(wanted, str) else wanted:
            coerced = _coerce(error.instance, kind)
            if coerced is not _NO_COERCION:
                return [(list(error.absolute_path), error.instance, coerced)]
        return []
    if _keyword(error) in ("anyOf", "oneOf"):
        # Take the first alternative whose every complaint is a safe coercion (e.g. `Point | None`).
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context or ():
            branches.setdefault(sub.schema_path[0] if sub.schema_path else None, []).append(sub)
        for complaints in branches.values():
            fixes = [_safe_coercions(sub) for sub in complaints]
            if all(fixes):
                return [fix for group in fixes for fix in group]
    return []


def _coerce(value: Any, kind: str) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if kind == "integer" and _INTEGER.match(text):
            return int(text)
        if kind == "number":
            if _INTEGER.match(text):
                return int(text)
            try:
                number = float(text)
            except ValueError:
                return _NO_COERCION
            return number if math.isfinite(number) else _NO_COERCION
        if kind == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if kind in ("object", "array") and text[:1] in "{[":
            try:
                parsed = json.loads(text)
            except ValueError:
                return _NO_COERCION
            if (kind == "object") == isinstance(parsed, dict) and (kind == "array") == isinstance(
                parsed, list
            ):
                return parsed
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "array" and not isinstance(value, list):
        return _NO_COERCION
    return _NO_COERCION


def _set_at(root: dict[str, Any], path: list[str | int], value: Any) -> None:
    target: Any = root
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


# ------------------------------------------------------------------------------------- shape and secrets


def _known_names(schema: JsonSchema) -> frozenset[str] | None:
    """The argument names a schema takes, or `None` if it allows others (or cannot say: no `properties`
    at its top, or a combinator or reference that may add some)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    if schema.get("additionalProperties", False) is not False or "patternProperties" in schema:
        return None
    if schema.get("unevaluatedProperties", False) is not False:
        return None
    if any(k in schema for k in ("allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas")):
        return None
    return frozenset(cast("dict[str, Any]", properties))


@dataclass(frozen=True, slots=True)
class _Shape:
    """Which names an object in the arguments may have, worked out once per tool from its schema."""

    known: frozenset[str] | None = None
    """The names it takes; `None`: any (the schema allows others, or does not say)."""
    fields: dict[str, _Shape] = field(default_factory=dict[str, "_Shape"])
    """Its properties whose values are objects (or arrays of objects) with names of their own to check."""
    items: _Shape | None = None
    """For an array: the shape of each item."""


_ANY = _Shape()
_MAX_SHAPE_DEPTH = 8


def _shape(schema: Any, root: JsonSchema, depth: int, refs: dict[tuple[str, int], _Shape]) -> _Shape:
    """The shape a (sub)schema gives a value, to `_MAX_SHAPE_DEPTH` levels. Local `$ref`s are followed; a
    definition met again at the same depth is the same shape, so a recursive model stays small."""
    if not isinstance(schema, dict) or depth > _MAX_SHAPE_DEPTH:
        return _ANY
    node = cast("dict[str, Any]", schema)
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) == 1:  # a bare reference, as pydantic writes a nested model
        if (ref, depth) not in refs:
            target = _local(ref, root)
            refs[ref, depth] = _ANY if target is None else _shape(target, root, depth + 1, refs)
        return refs[ref, depth]
    branches = node.get("anyOf", node.get("oneOf"))
    if isinstance(branches, list):  # `X | None`, as pydantic writes an optional field: the shape of X
        kept = [b for b in cast("list[Any]", branches) if b != {"type": "null"}]
        return _shape(kept[0], root, depth + 1, refs) if len(kept) == 1 else _ANY
    if node.get("type") == "array" or "items" in node:
        items = _shape(node.get("items"), root, depth + 1, refs)
        return _ANY if items is _ANY else _Shape(items=items)
    properties = node.get("properties")
    if not isinstance(properties, dict):
        return _ANY
    fields = {
        name: sub
        for name, value in cast("dict[str, Any]", properties).items()
        if (sub := _shape(value, root, depth + 1, refs)) is not _ANY
    }
    known = _known_names(node)
    return _ANY if known is None and not fields else _Shape(known, fields)


def _local(ref: str, root: JsonSchema) -> Any:
    """What a local reference (`#/$defs/Location`) points at in `root`; None for any other."""
    if not ref.startswith("#/"):
        return None
    target: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(target, dict):
            return None
        target = cast("dict[str, Any]", target).get(part.replace("~1", "/").replace("~0", "~"))
    return target


def _unknown_in(value: Any, shape: _Shape, path: list[str | int], problems: list[Problem]) -> None:
    if isinstance(value, list):
        if shape.items is not None:
            for index, item in enumerate(cast("list[Any]", value)):
                _unknown_in(item, shape.items, [*path, index], problems)
        return
    if not isinstance(value, dict):
        return
    names = cast("dict[Any, Any]", value)
    if shape.known is not None and not names.keys() <= shape.known:
        problems += [_unknown(name, shape.known, path) for name in names if name not in shape.known]
    for name, sub in shape.fields.items():
        if name in names:
            _unknown_in(names[name], sub, [*path, name], problems)


def _unknown(name: Any, known: frozenset[str], path: list[str | int]) -> Problem:
    shown = name if isinstance(name, str) else repr(name)
    shown = shown if len(shown) <= 60 else shown[:59] + "…"  # a model's key can be any length
    close = difflib.get_close_matches(shown, sorted(known), n=1, cutoff=0.6)
    what = "argument" if not path else "field"
    if close:
        hint = f"did you mean `{close[0]}`?"
    elif known:
        hint = f"{'this tool' if not path else 'it'} takes {', '.join(f'`{k}`' for k in sorted(known))}"
    else:
        hint = f"{'this tool' if not path else 'it'} takes no {what}s"
    return Problem(_json_path([*path, shown]), f"unknown {what}; {hint}", "additionalProperties")


def _not_json(value: Any, path: str, depth: int, problems: list[Problem]) -> None:
    """Adds a problem for each part of `value` (a dict or list) JSON cannot hold, and for nesting too deep.
    Per call on the hot path: scalars cost one type check each."""
    if depth > MAX_DEPTH:
        problems.append(Problem(path, f"nests more than {MAX_DEPTH} levels deep", "maxDepth"))
        return
    if isinstance(value, dict):
        for key, item in cast("dict[Any, Any]", value).items():
            if type(key) is not str:
                problems.append(
                    Problem(path, f"has a key that is not a string: {key!r:.40}", "propertyNames")
                )
            elif type(item) in _CHECKED:
                _not_json_item(item, f"{path}.{key}", depth, problems)
    else:
        for index, item in enumerate(cast("list[Any]", value)):
            if type(item) in _CHECKED:
                _not_json_item(item, f"{path}[{index}]", depth, problems)


_CHECKED = frozenset({float, dict, list})


def _not_json_item(item: Any, path: str, depth: int, problems: list[Problem]) -> None:
    if isinstance(item, float):
        if not math.isfinite(item):
            problems.append(Problem(path, f"must be a finite number; got {item}", "type"))
    else:
        _not_json(item, path, depth + 1, problems)


def _secret_paths(arguments: dict[str, Any], schema: JsonSchema) -> Callable[[Sequence[str | int]], bool]:
    """Whether the value at a path is one the schema marks secret (then no message may show it)."""
    redacted = redact(arguments, schema)
    if redacted is arguments:
        return lambda path: False

    def secret(path: Sequence[str | int]) -> bool:
        node: Any = redacted
        for part in path:
            if node == REDACTED:
                return True
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return False
        return node == REDACTED

    return secret


# -------------------------------------------------------------------------------------------- messages


def _problems(
    errors: Iterable[ValidationError], secret: Callable[[Sequence[str | int]], bool]
) -> list[Problem]:
    problems: list[Problem] = []
    by_path: dict[str, list[ValidationError]] = {}
    for e in errors:
        if _keyword(e) == "required":
            instance: Any = e.instance
            present: dict[str, Any] = cast("dict[str, Any]", instance) if isinstance(instance, dict) else {}
            for name in _expected(e):
                if name not in present:
                    problems.append(
                        Problem(_json_path([*e.absolute_path, name]), "missing required argument", "required")
                    )
            continue
        by_path.setdefault(_json_path(e.absolute_path), []).append(e)
    for path, found in by_path.items():
        # "must be one of a, b" already says what "must be a string" would: keep the more specific one.
        specific = [e for e in found if _keyword(e) in ("enum", "const")]
        problems.extend(
            Problem(path, _message(e, hide=secret(list(e.absolute_path))), _keyword(e))
            for e in (specific or found)
        )
    problems.sort(key=lambda p: p.path)
    return problems


def _json_path(path: Iterable[str | int]) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _message(e: ValidationError, *, hide: bool = False) -> str:
    """The problem in words; with `hide`, without the value (the schema marks it secret)."""
    v, expected = _keyword(e), _expected(e)
    got: Any = e.instance
    if hide:
        head, cut, _ = _message(e).partition("; got")
        return f"{head}; got {_SECRET}" if cut else f"is not valid ({v}); got {_SECRET}"
    match v:
        case "type":
            wanted = " or ".join(_a(t) for t in ([expected] if isinstance(expected, str) else expected))
            return f"must be {wanted}; got {_kind(got)} {_show(got)}"
        case "enum":
            return f"must be one of {', '.join(_show(x) for x in expected)}; got {_show(got)}"
        case "const":
            return f"must be {_show(expected)}; got {_show(got)}"
        case "minimum":
            return f"must be >= {expected}; got {_show(got)}"
        case "maximum":
            return f"must be <= {expected}; got {_show(got)}"
        case "exclusiveMinimum":
            return f"must be > {expected}; got {_show(got)}"
        case "exclusiveMaximum":
            return f"must be < {expected}; got {_show(got)}"
        case "multipleOf":
            return f"must be a multiple of {expected}; got {_show(got)}"
        case "minLength":
            return f"must be at least {expected} characters long; got {len(got)}"
        case "maxLength":
            return f"must be at most {expected} characters long; got {len(got)}"
        case "pattern":
            return f"must match the pattern {expected!r}; got {_show(got)}"
        case "format":
            return f"must be a valid {expected}; got {_show(got)}"
        case "minItems":
            return f"must have at least {expected} items; got {len(got)}"
        case "maxItems":
            return f"must have at most {expected} items; got {len(got)}"
        case "uniqueItems":
            return "must not contain duplicate items"
        case "additionalProperties" | "unevaluatedProperties":
            schema: Any = e.schema
            properties: dict[str, Any] = (
                cast("dict[str, Any]", schema).get("properties", {}) if isinstance(schema, dict) else {}
            )
            allowed = sorted(properties)
            given: dict[str, Any] = cast("dict[str, Any]", got) if isinstance(got, dict) else {}
            extra = sorted(k for k in given if k not in allowed)
            hint = f"; allowed: {', '.join(allowed)}" if allowed else ""
            return f"unexpected argument{'s' if len(extra) > 1 else ''} {', '.join(f'`{x}`' for x in extra)}{hint}"
        case "anyOf" | "oneOf":
            return f"does not match any allowed form; got {_kind(got)} {_show(got)}"
        case _:
            return e.message


_ARTICLES = {"integer": "an integer", "object": "an object", "array": "an array", "null": "null"}


def _a(kind: str) -> str:
    return _ARTICLES.get(kind, f"a {kind}")


def _kind(value: Any) -> str:
    match value:
        case bool():
            return "boolean"
        case int():
            return "integer"
        case float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case dict():
            return "object"
        case None:
            return "null"
        case _:
            return type(value).__name__


def _show(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fast_path(e: fastjsonschema.JsonSchemaValueException) -> str:
    name = str(e.name or "data")
    return "$" + name.removeprefix("data")


def _strip_name(message: str) -> str:
    return re.sub(r"^data(\.\S+|\[\d+\])* ", "", message)


# ------------------------------------------------------------------------------------- schema dialects


_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _draft7(schema: JsonSchema) -> JsonSchema:
    """fastjsonschema speaks draft 7: map 2020-12 `prefixItems` to draft 7 tuple `items`, drop `$schema`."""

    def convert(node: Any) -> Any:
        if isinstance(node, dict):
            out: dict[str, Any] = {}
            for key, value in cast("dict[str, Any]", node).items():
                if key == "$schema":
                    continue
                if key in _SCHEMA_MAPS and isinstance(value, dict):
                    out[key] = {name: convert(sub) for name, sub in cast("dict[str, Any]", value).items()}
                else:
                    out[key] = convert(value)
            if "prefixItems" in out:
                out["additionalItems"] = out.pop("items", True)
                out["items"] = out.pop("prefixItems")
            return out
        if isinstance(node, list):
            return [convert(v) for v in cast("list[Any]", node)]
        return node

    converted: JsonSchema = convert(schema)
    return converted
