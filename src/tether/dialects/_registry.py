"""The dialect registry: built-in dialects register here exactly as a third-party plugin would.

A package can also declare an entry point in the `tether.dialects` group naming a `Dialect` (an instance, or
a class made with no arguments); entry points are loaded the first time a name is not found, or when the
names are listed, so the per-turn lookup stays a dict read.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import cast

from tether.dialects._dialect import Dialect
from tether.exceptions import UserError

__all__ = ["ENTRY_POINT_GROUP", "dialect_names", "get_dialect", "register_dialect"]

ENTRY_POINT_GROUP = "tether.dialects"

_DIALECTS: dict[str, Dialect] = {}
_entry_points_loaded: bool | str = False
"""Whether the entry points were loaded; if one failed, why (said again on every later lookup that needs them,
not lost to an "unknown dialect")."""


def register_dialect(dialect: Dialect, *, replace: bool = False) -> Dialect:
    """Make `dialect` available to `parse(..., dialect=dialect.name)` and `stream_parser`.

    Args:
        dialect: The dialect instance.
        replace: Allow replacing a dialect already registered under the same name.

    Raises:
        UserError: `dialect` is no `Dialect` instance with a name, or a different dialect is already registered
            under that name and `replace` is false.
    """
    _check(dialect, "register_dialect()")
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
        if _load_entry_points():
            return get_dialect(name)
    elif isinstance(cast("object", name), Dialect):  # anything else may arrive at run time: a clear error
        return name
    known = ", ".join(sorted(_DIALECTS))
    raise UserError(f"unknown dialect {name!r}; known dialects: {known}")


def dialect_names() -> list[str]:
    """Names of all registered dialects (entry points' included), sorted."""
    _load_entry_points()
    return sorted(_DIALECTS)


def _load_entry_points() -> bool:
    """Register the dialects of the `tether.dialects` entry points, once; returns whether this call did.

    Raises:
        UserError: An entry point fails to load, names no dialect, or a name already taken.
    """
    global _entry_points_loaded
    loaded = _entry_points_loaded
    if loaded is True:
        return False
    if loaded:
        raise UserError(loaded)
    _entry_points_loaded = True
    try:
        _register_entry_points()
    except UserError as e:
        _entry_points_loaded = str(e)
        raise
    return True


def _register_entry_points() -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {ep.name!r} in {ENTRY_POINT_GROUP} ({ep.value})"
        try:
            found: object = ep.load()
            dialect = found
            if isinstance(found, type) and issubclass(found, Dialect):
                dialect = cast("object", found())
        except Exception as e:  # the plugin's own failure: named, with the package to fix or uninstall
            raise UserError(
                f"{where} failed to load ({type(e).__name__}: {e}): fix or uninstall the package that declares it"
            ) from e
        if not isinstance(dialect, Dialect):
            raise UserError(f"{where} must name a Dialect, not {found!r}")
        _check(dialect, where)
        if _DIALECTS.get(dialect.name, dialect) is not dialect:
            raise UserError(
                f"entry point {ep.name!r} in {ENTRY_POINT_GROUP} registers a dialect named {dialect.name!r}, "
                "which is already taken: give the plugin's dialect another name"
            )
        _DIALECTS[dialect.name] = dialect


def _check(dialect: object, where: str) -> None:
    """A dialect must be a `Dialect` instance with a name (a class attribute, e.g. `name = "tagged"`)."""
    if isinstance(dialect, type):
        raise UserError(
            f"{where} takes a Dialect instance, not the class {dialect.__name__}: write {dialect.__name__}()"
        )
    if not isinstance(dialect, Dialect):
        raise UserError(f"{where} takes a Dialect (tether.dialects.Dialect), not {dialect!r}")
    name: object = getattr(dialect, "name", None)
    if type(name) is not str or not name:
        raise UserError(
            f'{where}: the dialect {type(dialect).__name__} has no name: set `name = "..."` on its class '
            "(the name `parse(..., dialect=name)` uses)"
        )
