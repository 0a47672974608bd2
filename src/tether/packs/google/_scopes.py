"""Which Google scope each tool needs, and how the scopes a user granted become tether scopes.

A tool declares the tether scope `google:<short name>` of the narrowest Google scope that lets it work (read
tools never ask for write scopes). A grant of a broader Google scope implies the narrower ones it covers
(`drive` covers `drive.readonly` and `drive.file`), so `principal_scopes` maps a token's scopes onto every
tether scope they satisfy, for the executor's scope guard.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["GOOGLE_SCOPE_PREFIX", "google_scope_url", "principal_scopes", "tether_scope"]

GOOGLE_SCOPE_PREFIX = "https://www.googleapis.com/auth/"

_IMPLIES: dict[str, tuple[str, ...]] = {
    "gmail.modify": ("gmail.readonly", "gmail.send", "gmail.compose"),
    "gmail.compose": ("gmail.send",),
    "drive": ("drive.readonly", "drive.file"),
    "calendar": ("calendar.readonly", "calendar.events", "calendar.events.readonly"),
    "calendar.readonly": ("calendar.events.readonly",),
    "calendar.events": ("calendar.events.readonly",),
    "documents": ("documents.readonly",),
    "spreadsheets": ("spreadsheets.readonly",),
    "tasks": ("tasks.readonly",),
}


def tether_scope(short: str) -> str:
    """The tether scope for a Google scope's short name, e.g. `google:gmail.readonly`."""
    return f"google:{short}"


def google_scope_url(short: str) -> str:
    """The OAuth scope URL Google knows, e.g. `https://www.googleapis.com/auth/gmail.readonly`."""
    return GOOGLE_SCOPE_PREFIX + short


def short_name(scope: str) -> str:
    return scope.removeprefix(GOOGLE_SCOPE_PREFIX)


def principal_scopes(granted: Iterable[str]) -> frozenset[str]:
    """Every tether scope that the Google scopes `granted` (URLs or short names) satisfy."""
    out: set[str] = set()
    pending = [short_name(s) for s in granted]
    while pending:
        short = pending.pop()
        if tether_scope(short) in out:
            continue
        out.add(tether_scope(short))
        pending.extend(_IMPLIES.get(short, ()))
    return frozenset(out)
