"""Tools defined as TypeScript-like signatures with JSDoc (seed 003).

```ts
/**
 * Downloads content from a URI with timeout. Returns the content as a string.
 * @param uri The URI to fetch.
 * @param timeoutMs Give up after this many milliseconds.
 * @example wget("https://example.com", 5000)
 * @example wget("https://example.org/data.json", 1000) => "{\"a\": 1}"
 * @example wget(`http://localhost:8080/`, 250)
 */
wget(string uri, number timeoutMs): string
```

Both parameter orders are read: seed 003's `string uri` and TypeScript's `uri: string` (with `uri?:` for
optional). Types: `string number integer boolean object any unknown null`, `T[]`, `Array<T>`,
`Record<string, T>`, `{ a: T; b?: U }`, literal unions (`'c' | 'f'`), `Promise<T>` (unwrapped).
Tags besides `@param`/`@returns`/`@example`: `@category`, `@sideEffects none|idempotent|mutating`,
`@requiresWhy`, `@scope NAME`. Seed 003 asks for at least three examples per tool.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from tether._syntax import SyntaxCall, parse_call
from tether.exceptions import UserError
from tether.types import JsonSchema, ToolExample, ToolSpec

__all__ = ["MIN_EXAMPLES", "specs_from_typescript"]

MIN_EXAMPLES = 3
"""Seed 003: every tool definition carries at least three examples."""

_TOKEN = re.compile(
    r"""(?P<doc>/\*\*.*?\*/)|(?P<comment>/\*.*?\*/|//[^\n]*)|(?P<ws>\s+)
    |(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(?P<number>-?\d+(?:\.\d+)?)
    |(?P<ident>[A-Za-z_$][\w$]*)|(?P<arrow>=>)|(?P<punct>[(){}\[\]<>,:;?|=.])""",
    re.DOTALL | re.VERBOSE,
)
_KEYWORDS = frozenset({"export", "declare", "function", "async"})
_PRIMITIVES: dict[str, JsonSchema] = {
    "string": {"type": "string"}, "number": {"type": "number"}, "integer": {"type": "integer"},
    "int": {"type": "integer"}, "boolean": {"type": "boolean"}, "object": {"type": "object"},
    "null": {"type": "null"}, "any": {}, "unknown": {}, "Date": {"type": "string", "format": "date-time"},
    "void": {}, "undefined": {},
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    line: int


def specs_from_typescript(
    text: str, *, source: str = "TypeScript", min_examples: int = MIN_EXAMPLES
) -> list[ToolSpec]:
    """Every tool signature in a TypeScript-like definition file."""
    parser = _Parser(list(_tokens(text, source)), source)
    specs: list[ToolSpec] = []
    while not parser.done():
        doc = parser.take_doc()
        if parser.done():
            break
        specs.append(parser.signature(doc, min_examples))
    if not specs:
        raise UserError(f"{source}: no tool signatures found (expected e.g. `wget(string uri): string`).")
    return specs


def _tokens(text: str, source: str) -> Iterator[_Token]:
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise UserError(f"{source}:{line}: unexpected character {text[pos]!r}.")
        kind = m.lastgroup or ""
        if kind not in ("ws", "comment"):
            yield _Token(kind, m.group(), line)
        line += m.group().count("\n")
        pos = m.end()


class _Parser:
    def __init__(self, tokens: list[_Token], source: str):
        self.tokens = tokens
        self.i = 0
        self.source = source

    # ------------------------------------------------------------------------------------ token access

    def done(self) -> bool:
        return self.i >= len(self.tokens)

    def peek(self, offset: int = 0) -> _Token | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def next(self) -> _Token:
        token = self.peek()
        if token is None:
            last = self.tokens[-1].line if self.tokens else 1
            raise UserError(f"{self.source}:{last}: the definition ends in the middle of a signature.")
        self.i += 1
        return token

    def expect(self, text: str) -> _Token:
        token = self.next()
        if token.text != text:
            raise UserError(f"{self.source}:{token.line}: expected {text!r}, found {token.text!r}.")
        return token

    def accept(self, text: str) -> bool:
        token = self.peek()
        if token is not None and token.text == text:
            self.i += 1
            return True
        return False

    def take_doc(self) -> _Doc:
        doc: _Doc | None = None
        while (token := self.peek()) is not None and token.kind == "doc":
            doc = _Doc.parse(token.text)
            self.i += 1
        return doc or _Doc()

    # ---------------------------------------------------------------------------------------- grammar

    def signature(self, doc: _Doc, min_examples: int) -> ToolSpec:
        while (token := self.peek()) is not None and token.text in _KEYWORDS:
            self.i += 1
        first = self.next()
        if first.kind != "ident":
            raise UserError(f"{self.source}:{first.line}: expected a tool name, found {first.text!r}.")
        name = first.text
        while self.accept("."):
            name += "." + self.next().text
        self.expect("(")
        properties: dict[str, JsonSchema] = {}
        required: list[str] = []
        while not self.accept(")"):
            param, schema, optional = self.parameter()
            if param in properties:
                raise UserError(f"{self.source}:{first.line}: {name} declares parameter {param!r} twice.")
            if param in doc.params:
                schema = {**schema, "description": doc.params[param]}
            properties[param] = schema
            if not optional:
                required.append(param)
            if not self.accept(","):
                self.expect(")")
                break
        output = self.type_expr() if self.accept(":") else None
        self.accept(";")
        where = f"{self.source}:{first.line}: {name}"
        unknown = set(doc.params) - set(properties)
        if unknown:
            raise UserError(f"{where}: @param for {sorted(unknown)}, which the signature does not declare.")
        if len(doc.examples) < min_examples:
            raise UserError(
                f"{where}: has {len(doc.examples)} @example(s); seed 003 asks for at least {min_examples} "
                "(pass min_examples= to relax)."
            )
        if output is not None and doc.returns:
            output = {**output, "description": doc.returns}
        order = list(properties)
        try:
            return ToolSpec(
                name=name,
                description=doc.description,
                category=doc.tags.get("category"),
                input_schema={"type": "object", "properties": properties, "required": required},
                output_schema=output or None,
                examples=tuple(_example(e, name, order, where) for e in doc.examples),
                scopes=tuple(doc.scopes),
                side_effects=doc.tags.get("sideEffects", "mutating"),  # pyright: ignore[reportArgumentType]
                requires_why="requiresWhy" in doc.tags,
            )
        except ValueError as e:
            raise UserError(f"{where}: {e}") from e

    def parameter(self) -> tuple[str, JsonSchema, bool]:
        # TypeScript order `name?: T` when a ':' (or '?:') follows the first identifier, else `T name`.
        ahead, after = self.peek(1), self.peek(2)
        if ahead is not None and (
            ahead.text == ":" or (ahead.text == "?" and after is not None and after.text == ":")
        ):
            name = self.next().text
            optional = self.accept("?")
            self.expect(":")
            return name, self.type_expr(), optional
        schema = self.type_expr()
        token = self.next()
        optional = self.accept("?")
        if token.kind != "ident":
            raise UserError(f"{self.source}:{token.line}: expected a parameter name, found {token.text!r}.")
        return token.text, schema, optional

    def type_expr(self) -> JsonSchema:
        options = [self.array_type()]
        while self.accept("|"):
            options.append(self.array_type())
        if len(options) == 1:
            return options[0]
        if all("const" in o for o in options):
            return {"enum": [o["const"] for o in options]}
        return {"anyOf": options}

    def array_type(self) -> JsonSchema:
        schema = self.primary_type()
        while self.peek() is not None and self.peek().text == "[" and (n := self.peek(1)) and n.text == "]":  # pyright: ignore[reportOptionalMemberAccess]
            self.i += 2
            schema = {"type": "array", "items": schema}
        return schema

    def primary_type(self) -> JsonSchema:
        token = self.next()
        if token.kind == "string":
            return {"const": token.text[1:-1]}
        if token.kind == "number":
            return {"const": float(token.text) if "." in token.text else int(token.text)}
        if token.text == "(":
            schema = self.type_expr()
            self.expect(")")
            return schema
        if token.text == "{":
            return self.object_type()
        if token.kind != "ident":
            raise UserError(f"{self.source}:{token.line}: expected a type, found {token.text!r}.")
        if token.text in ("true", "false"):
            return {"const": token.text == "true"}
        if self.accept("<"):
            args = [self.type_expr()]
            while self.accept(","):
                args.append(self.type_expr())
            self.expect(">")
            return self.generic(token, args)
        if token.text not in _PRIMITIVES:
            raise UserError(
                f"{self.source}:{token.line}: unknown type {token.text!r}; use string, number, integer, boolean, "
                "object, any, T[], Array<T>, Record<string, T> or an object type { a: T }."
            )
        return dict(_PRIMITIVES[token.text])

    def generic(self, token: _Token, args: list[JsonSchema]) -> JsonSchema:
        if token.text == "Array" and len(args) == 1:
            return {"type": "array", "items": args[0]}
        if token.text == "Record" and len(args) == 2:
            return {"type": "object", "additionalProperties": args[1]}
        if token.text == "Promise" and len(args) == 1:
            return args[0]
        raise UserError(f"{self.source}:{token.line}: unsupported generic type {token.text}<...>.")

    def object_type(self) -> JsonSchema:
        properties: dict[str, JsonSchema] = {}
        required: list[str] = []
        while not self.accept("}"):
            key = self.next()
            name = key.text[1:-1] if key.kind == "string" else key.text
            optional = self.accept("?")
            self.expect(":")
            properties[name] = self.type_expr()
            if not optional:
                required.append(name)
            if not (self.accept(";") or self.accept(",")):
                self.expect("}")
                break
        return {"type": "object", "properties": properties, "required": required}


@dataclass
class _Doc:
    description: str = ""
    params: dict[str, str] = field(default_factory=dict[str, str])
    returns: str = ""
    examples: list[str] = field(default_factory=list[str])
    tags: dict[str, str] = field(default_factory=dict[str, str])
    scopes: list[str] = field(default_factory=list[str])

    @staticmethod
    def parse(comment: str) -> _Doc:
        body = comment.removeprefix("/**").removesuffix("*/")
        lines = [re.sub(r"^\s*\* ?", "", line) for line in body.splitlines()]
        blocks: list[list[str]] = [[]]
        for line in lines:
            if line.lstrip().startswith("@"):
                blocks.append([line.strip()])
            else:
                blocks[-1].append(line)
        doc = _Doc("\n".join(blocks[0]).strip())
        for block in blocks[1:]:
            tag, _, rest = " ".join(block[:1]).partition(" ")
            text = "\n".join([rest, *block[1:]]).strip()
            doc.add(tag[1:], text)
        return doc

    def add(self, tag: str, text: str) -> None:
        if tag == "param":
            m = re.match(
                r"(?:\{[^}]*\}\s*)?\[?([A-Za-z_$][\w$]*)(?:=[^\]]*)?\]?\s*(?:-\s*)?(.*)", text, re.DOTALL
            )
            if m:
                self.params[m.group(1)] = " ".join(m.group(2).split())
        elif tag in ("returns", "return"):
            self.returns = " ".join(re.sub(r"^\{[^}]*\}\s*", "", text).split())
        elif tag == "example":
            self.examples.append(text)
        elif tag == "scope":
            self.scopes.extend(text.split())
        else:
            self.tags[tag] = text.strip() or "true"


def _js_call(text: str) -> SyntaxCall:
    """A call expression with JavaScript literals, read strictly (it is the developer's text): a call cut off
    before its `)` is an error, not a repair."""
    call = parse_call(text, 0, len(text), "js")
    if call.error is None and any(r.kind == "unbalanced_brackets" for r in call.repairs):
        call.error = "missing ')' at the end of the call"
    return call


def _example(text: str, name: str, order: list[str], where: str) -> ToolExample:
    call_text, _, output_text = text.partition("=>")
    call = _js_call(call_text.strip())
    if call.error is not None:
        raise UserError(f"{where}: example {call_text.strip()!r} is not a call: {call.error}")
    if call.name != name:
        raise UserError(f"{where}: example {call_text.strip()!r} calls {call.name!r}, not {name!r}.")
    if len(call.args) > len(order):
        raise UserError(
            f"{where}: example {call_text.strip()!r} passes {len(call.args)} arguments; {name} takes {len(order)}."
        )
    arguments: dict[str, Any] = dict(zip(order, call.args, strict=False))
    if len(call.args) == 1 and len(order) != 1 and isinstance(call.args[0], dict):
        arguments = cast("dict[str, Any]", call.args[0])  # seed 003 also writes calls as fn({a: 1, b: 2})
    output: Any = None
    if output_text.strip():
        parsed = _js_call(f"f({output_text.strip()})")
        output = parsed.args[0] if parsed.error is None and parsed.args else output_text.strip()
    return ToolExample(input=arguments, output=output)
