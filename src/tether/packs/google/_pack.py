"""`google_pack`: the 30 Google Workspace tools of seed 000 (and file_upload to Drive), registered as `google`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from tether.builtin import PackConfig, Roots, ToolPack
from tether.packs.google._client import CredentialsSource, GoogleApi
from tether.packs.google._kit import DEFAULT_CONFIRM, Kit
from tether.packs.google._text import MAX_CHARS
from tether.packs.google.calendar import calendar_tools
from tether.packs.google.docs import docs_tools
from tether.packs.google.drive import drive_tools, file_upload_tool
from tether.packs.google.gmail import gmail_tools
from tether.packs.google.sheets import sheets_tools
from tether.packs.google.tasks import tasks_tools
from tether.tools import Toolset

__all__ = ["GOOGLE_PACK", "google_pack"]


def google_pack(
    credentials: CredentialsSource | None = None,
    *,
    http: Any = None,
    confirm: Iterable[str] = DEFAULT_CONFIRM,
    max_chars: int = MAX_CHARS,
    roots: Sequence[str | os.PathLike[str]] = (),
) -> Toolset:
    """Gmail, Drive, Calendar, Docs, Sheets and Tasks tools on the official client.

    Args:
        credentials: Returns the user's credentials when a tool first needs them (default: the ones
            `tether auth google` saved, refreshed as needed).
        http: An httplib2-like transport instead of credentials (tests: `HttpMockSequence`).
        confirm: Tools that answer with a `needs` asking the user to confirm before they act (default:
            sending mail and every delete); pass `()` to act at once.
        max_chars: The most characters of a body, file or document one call returns.
        roots: Workspace folders `file_upload` may send files from (no file_upload without them).
    """
    if credentials is None and http is None:
        from tether.packs.google._auth import stored_credentials

        credentials = stored_credentials
    kit = Kit(GoogleApi(credentials, http=http), frozenset(confirm), max_chars)
    families = (gmail_tools, drive_tools, calendar_tools, docs_tools, sheets_tools, tasks_tools)
    tools = [t for family in families for t in family(kit)]
    if roots:
        tools.append(file_upload_tool(kit, Roots(roots)))
    return Toolset(*tools)


def _build(config: PackConfig) -> Toolset:
    confirm = config.options.get("google_confirm", DEFAULT_CONFIRM)
    return google_pack(confirm=confirm, roots=config.roots)


GOOGLE_PACK = ToolPack(
    "google",
    _build,
    "Gmail, Drive, Calendar, Docs, Sheets, Tasks (seed 000); sign in with `tether auth google`",
)
