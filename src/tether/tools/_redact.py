"""Redaction by schema: values the schema marks secret (`format: password` or `x-secret: true`) never reach
the journal or the records; and by value (`SecretText`): the same values wherever they are echoed."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from typing import Any

from tether.types import JsonSchema

__all__ = ["REDACTED", "SecretText", "redact"]

REDACTED = "***"
_MAX_DEPTH = 32
_WORD = "0-9A-Za-z_"
_LONG = 8
"""A secret at least this long is replaced wherever it occurs; a shorter one only as a whole word, so a PIN
`1234` does not eat into `12345` (nor a one-letter value into every word)."""


def redact(value: Any, schema: JsonSchema | None) -> Any:
    """`value` with every part the JSON Schema marks secret replaced by `"***"`; the input is not modified.

    A schema that marks nothing secret gets `value` itself back (and one that marks anything, for a dict, a
    new dict): a caller may ask once which a schema is."""
    if not schema:
        return value
    cached = _SECRET_FREE.get(id(schema))  # `_has_secrets`, inlined for the usual schema, already seen
    if cached is not None and cached[0] is schema:
        if not cached[1]:
            return value
    elif not _has_secrets(schema):
        return value
    return _redact(value, schema, schema, 0)


_SECRET_FREE: dict[int, tuple[JsonSchema, bool]] = {}


def _has_secrets(schema: JsonSchema) -> bool:
    """Whether the schema marks anything secret; remembered per schema object (specs are immutable)."""
    cached = _SECRET_FREE.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    found = _marks_secret(schema)
    if len(_SECRET_FREE) > 10_000:
        _SECRET_FREE.clear()
    _SECRET_FREE[id(schema)] = (schema, found)
    return found


def _marks_secret(node: Any) -> bool:
    if isinstance(node, dict):
        if node.get("format") == "password" or node.get("x-secret") is True:  # pyright: ignore[reportUnknownMemberType]
            return True
        return any(_marks_secret(v) for v in node.values())  # pyright: ignore[reportUnknownVariableType]
    if isinstance(node, list):
        return any(_marks_secret(v) for v in node)  # pyright: ignore[reportUnknownVariableType]
    return False


def _redact(value: Any, schema: Any, root: JsonSchema, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH or value is None:
        return value
    node: dict[str, Any] = _resolve(schema, root)  # pyright: ignore[reportUnknownArgumentType]
    if node.get("format") == "password" or node.get("x-secret") is True:
        return REDACTED
    for combinator in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(combinator, ()):
            value = _redact(value, branch, root, depth + 1)
    if isinstance(value, dict):
        properties: dict[str, Any] = node.get("properties", {})
        additional = node.get("additionalProperties")
        out: dict[str, Any] = {}
        for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
            out[key] = _redact(item, properties.get(key, additional), root, depth + 1)  # pyright: ignore[reportUnknownArgumentType]
        return out
    if isinstance(value, list):
        prefix: list[Any] = node.get("prefixItems", [])
        items = node.get("items")
        return [
            _redact(item, prefix[i] if i < len(prefix) else items, root, depth + 1)
            for i, item in enumerate(value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        ]
    return value


def _resolve(node: dict[str, Any], root: JsonSchema) -> dict[str, Any]:
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return target if isinstance(target, dict) else node  # pyright: ignore[reportUnknownVariableType]


class SecretText:
    """Secret values, and text or JSON with each of them replaced by `***` wherever it occurs: as written,
    JSON-escaped (ASCII or not) and HTML-escaped; a value shorter than 8 characters only as a whole word.

    What `redact` takes out by schema is learned with `learn`, so an echo of the value elsewhere (a plain
    argument, a tool's result or error message, the model's text) is redacted too. False while it knows no
    value (then every method returns its input)."""

    def __init__(self, values: Iterable[str] = ()):
        self.values: set[str] = set()
        self.forms: tuple[str, ...] = ()
        """Every form of every value, longest first."""
        self._pattern: re.Pattern[str] | None = None
        self._going_on: re.Pattern[str] | None = None
        if values:
            self.add(values)

    def __bool__(self) -> bool:
        return self._pattern is not None

    def add(self, values: Iterable[str]) -> None:
        """Know these values too (blank ones and `***` itself are ignored)."""
        before = len(self.values)
        self.values |= {v for v in values if v.strip() and v != REDACTED}
        if len(self.values) != before:
            self.forms = tuple(_forms(self.values))
            self._pattern = _pattern(self.forms)
            self._going_on = _pattern(self.forms, going_on=True)

    def learn(self, original: Any, redacted: Any) -> None:
        """Know every value `redact` took out of `original` (its result is `redacted`): each string and
        number of a secret part, as text."""
        taken: set[str] = set()
        _taken(original, redacted, taken)
        self.add(taken)

    def text(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(REDACTED, text)

    def json(self, value: Any, *, keys: bool = True) -> Any:
        """`value` (JSON) with every secret taken out of its strings and keys (with `keys`), and numbers
        equal to a secret number replaced."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self._pattern.sub(REDACTED, value)
        if isinstance(value, dict):
            items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
            return {(self.text(k) if keys else k): self.json(v, keys=keys) for k, v in items.items()}
        if isinstance(value, list | tuple):
            return [self.json(v, keys=keys) for v in value]  # pyright: ignore[reportUnknownVariableType]
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and json.dumps(value) in self.values
        ):
            return REDACTED
        return value

    def streamed(self, text: str, before: str = "") -> tuple[str, str]:
        """Text that goes on in a next chunk: `(shown, held)`, `shown` redacted and `held` the end of `text`
        that could be the start of a secret (to put before the next chunk; `ended(held)` if none comes).
        `before`: the character shown just before `text` (whether a short secret starts a word)."""
        if self._going_on is None:
            return text, ""
        # no match starts in `before`: it would have been held back, as the start of a secret
        text = self._going_on.sub(REDACTED, before + text)[len(before) :]
        keep = _partial(text, self.forms)
        return (text[: len(text) - keep], text[len(text) - keep :]) if keep else (text, "")

    def ended(self, text: str, before: str = "") -> str:
        """The last of streamed text (`streamed`'s `held`), redacted; `before` as there."""
        return text if self._pattern is None else self._pattern.sub(REDACTED, before + text)[len(before) :]


def _taken(original: Any, redacted: Any, into: set[str]) -> None:
    if isinstance(redacted, str) and redacted == REDACTED and original != REDACTED:
        _leaves(original, into)
    elif isinstance(original, dict) and isinstance(redacted, dict):
        for key, value in original.items():  # pyright: ignore[reportUnknownVariableType]
            _taken(value, redacted.get(key), into)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    elif isinstance(original, list) and isinstance(redacted, list):
        for value, after in zip(original, redacted, strict=False):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            _taken(value, after, into)


def _leaves(value: Any, into: set[str]) -> None:
    """Every scalar of a secret value, as text (a secret object's strings and numbers are all secret)."""
    if isinstance(value, str):
        into.add(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        into.add(json.dumps(value))
    elif isinstance(value, dict):
        for item in value.values():  # pyright: ignore[reportUnknownVariableType]
            _leaves(item, into)
    elif isinstance(value, list | tuple):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            _leaves(item, into)


def _forms(values: set[str]) -> list[str]:
    forms: set[str] = set()
    for value in values:
        forms |= {
            value,
            json.dumps(value)[1:-1],
            json.dumps(value, ensure_ascii=False)[1:-1],
            html.escape(value),
        }
    return sorted(forms, key=len, reverse=True)


def _pattern(forms: Iterable[str], *, going_on: bool = False) -> re.Pattern[str]:
    """One regex for all `forms`; with `going_on`, a short one matches only with a character after it (at
    the end of text that goes on, the next chunk could make it part of a longer word)."""
    after = rf"(?=[^{_WORD}])" if going_on else rf"(?![{_WORD}])"
    alternatives = [
        re.escape(form) if len(form) >= _LONG else rf"(?<![{_WORD}]){re.escape(form)}{after}"
        for form in forms
    ]
    return re.compile("|".join(alternatives))


def _partial(text: str, forms: Iterable[str]) -> int:
    """How many characters at the end of `text` could begin a secret (the longest such end): a long form's
    proper prefix, a short form's prefix or all of it (whether its word goes on is not known yet)."""
    longest = 0
    for form in forms:
        most = min(len(text), len(form) if len(form) < _LONG else len(form) - 1)
        for size in range(most, longest, -1):
            if text.endswith(form[:size]):
                longest = size
                break
    return longest
