"""The dialect registry: built-in dialects register here exactly as a third-party plugin would."""

from __future__ import annotations

from typing import cast

from tether.dialects._dialect import Dialect
from tether.exceptions import UserError

__all__ = ["dialect_names", "get_dialect", "register_dialect"]

_DIALECTS: dict[str, Dialect] = {}


def register_dialect(dialect: Dialect, *, replace: bool = False) -> Dialect:
    """Make `dialect` available to `parse(..., dialect=dialect.name)` and `stream_parser`.

    Args:
        dialect: The dialect instance.
        replace: Allow replacing a dialect already registered under the same name.

    Raises:
        UserError: A different dialect is already registered under that name and `replace` is false.
    """
    existing = _DIALECTS.get(dialect.name)
    if existing is not None and existing is not dialect and not replace:
        raise UserError(
            f"a dialect named {dialect.name!r} is already registered; pass replace=True to replace it"
        )
    _DIALECTS[dialect.name] = dialect
    return dialect


def get_dialect(name: str | Dialect) -> Dialect:
    """The dialect registered as `name` (a `Dialect` instance is returned as is)."""
    if isinstance(name, str):  # the cheap check first: `Dialect` is an ABC, and this runs every turn
        found = _DIALECTS.get(name)
        if found is not None:
            return found
    elif isinstance(cast(object, name), Dialect):  # anything else may arrive at run time: a clear error
        return name
    known = ", ".join(sorted(_DIALECTS))
    raise UserError(f"unknown dialect {name!r}; known dialects: {known}")


def dialect_names() -> list[str]:
    """Names of all registered dialects, sorted."""
    return sorted(_DIALECTS)
