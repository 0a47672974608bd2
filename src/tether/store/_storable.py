"""Values every journal can hold and every model API can carry, whatever a tool or a model produced.

JSON text must be valid Unicode (no lone surrogates), PostgreSQL text cannot hold NUL, JSON has no NaN or
Infinity, and Python will not write an integer of more than 4300 digits as text. A value with none of these
is returned as it is, after one pass of pydantic's serializer (under a microsecond for an envelope; a
large value also goes through `json` once); anything else is copied with each such part replaced.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, cast

import pydantic_core

__all__ = ["REPLACEMENT", "storable", "storable_text"]

REPLACEMENT = "\ufffd"
"""What a lone surrogate or a NUL character becomes."""
_MAX_DEPTH = 128
_SUSPECT = re.compile(rb"\\u0000|NaN|Infinity").search  # a NUL, or a non-finite number
_LONGEST_INT_BITS = 14_000  # about 4200 decimal digits, under Python's 4300-digit limit for int -> str


def storable(value: Any) -> Any:
    """`value` (JSON values) with lone surrogates and NULs in its strings and keys replaced by U+FFFD,
    NaN and infinities by `null`, integers too long to write by a description, and nesting deeper than
    128 levels cut off; `value` itself when there is nothing to replace."""
    try:
        text = pydantic_core.to_json(value, inf_nan_mode="constants")
    except (ValueError, RecursionError):  # a lone surrogate (pydantic's error is a ValueError), or depth
        return _clean(value, 0)
    if _SUSPECT(text):  # perhaps only inside a string: then `_clean` finds nothing to replace, only slower
        return _clean(value, 0)
    if len(text) > 4000:  # maybe an integer Python will not write, or nesting too deep for `json`
        try:
            json.dumps(value)
        except (ValueError, RecursionError):
            return _clean(value, 0)
    return value


def storable_text(text: str) -> str:
    """`text` with lone surrogates and NUL characters replaced by U+FFFD."""
    if text.isascii():
        return text.replace("\x00", REPLACEMENT) if "\x00" in text else text
    # UTF-16 with surrogatepass keeps pairs together; decoding then replaces only the lone halves.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").replace("\x00", REPLACEMENT)


def _clean(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= _LONGEST_INT_BITS else _too_long(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= _MAX_DEPTH:
        return f"(nested more than {_MAX_DEPTH} levels deep: left out)"
    if isinstance(value, dict):
        items = cast("dict[Any, Any]", value).items()
        return {storable_text(k if isinstance(k, str) else str(k)): _clean(v, depth + 1) for k, v in items}
    if isinstance(value, list | tuple):
        return [_clean(v, depth + 1) for v in cast("list[Any]", value)]
    return storable_text(repr(value))


def _too_long(value: int) -> str:
    digits = int(value.bit_length() * math.log10(2)) + 1
    return f"(an integer of about {digits} digits: too long to write)"
