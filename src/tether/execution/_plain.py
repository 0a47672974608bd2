"""Values the journal, the records and every model API take exactly as they are, recognised cheaply.

Arguments and results are made JSON (`pydantic_core.to_jsonable_python`) and storable
(`tether.store.internal.storable`: no lone surrogates, NULs, NaN or integers too long to write) before the
journal keeps them: two passes of ~0.3-0.5 µs each for even the smallest value. The usual value is already
both: a number, a plain string, a flag, or a flat object of those. For it each pass would return an equal
value, so the executor skips them; anything else takes the full path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = ["plain_arguments", "plain_scalar"]

_type_of: Callable[[object], type] = type
"""`type(value)`, the real class (`__class__` may lie), typed for strict checking."""
_LIMIT = 1 << 64
"""Integers below this in size are written by every JSON encoder and held by every journal."""


def plain_scalar(value: Any) -> bool:
    """Whether `value` is a JSON scalar that `to_jsonable_python` and `storable` both return unchanged: `None`,
    a bool, an int of at most 64 bits, a finite float, or an ASCII string without NUL (exact types only:
    a subclass, e.g. an enum, may serialize otherwise)."""
    kind = _type_of(value)
    if kind is int:
        return -_LIMIT < value < _LIMIT
    if kind is str:
        return value.isascii() and "\x00" not in value
    if value is None or kind is bool:
        return True
    if kind is float:
        return math.isfinite(value)
    return False


def plain_arguments(arguments: dict[str, Any]) -> bool:
    """Whether `arguments` is a flat object of plain scalars under plain names (see `plain_scalar`, inlined
    here: a call a value costs more than the check)."""
    for name, value in arguments.items():
        if type(name) is not str or not name.isascii() or "\x00" in name:
            return False
        kind = _type_of(value)
        if kind is int:
            if not -_LIMIT < value < _LIMIT:
                return False
        elif kind is str:
            if not value.isascii() or "\x00" in value:
                return False
        elif kind is float:
            if not math.isfinite(value):
                return False
        elif value is not None and kind is not bool:
            return False
    return True
