"""Opening the journal a command was pointed at (`--db`, `--journal`, `TETHER_JOURNAL_URL`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tether.exceptions import UserError

if TYPE_CHECKING:
    from tether.store import SqlJournal

__all__ = ["URL_FORMS", "open_journal"]

URL_FORMS = "sqlite:///path/to/journal.db or postgresql+psycopg://user@host/db"


def open_journal(url: str, *, existing: bool) -> SqlJournal:
    """The journal at `url`; with `existing`, a SQLite file that is not there is an error, not a new journal.

    Raises:
        UserError: the URL cannot be read, its database driver is missing, or the database cannot be opened.
    """
    if existing and url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        raise UserError(f"No journal at {url}: set --db or TETHER_JOURNAL_URL to the journal's URL.")
    from sqlalchemy.exc import SQLAlchemyError

    from tether.store import SqlJournal

    try:
        return SqlJournal(url)
    except (SQLAlchemyError, ImportError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise UserError(
            f"Cannot open the journal at {_shown(url)}: {reason}. Give a URL such as {URL_FORMS}."
        ) from e


def _shown(url: str) -> str:
    """The URL with any password hidden."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return repr(url)
