"""The `google` pack (the `google` extra): seed 000's Gmail, Drive, Calendar, Docs, Sheets and Tasks tools on
the official `google-api-python-client`, with its bundled discovery documents (no network to build a client).

    tether auth google                                   # once: sign in, token saved 0600 in the config dir
    tether run --pack google --dialect json_calls --until end_turn "What is new in my inbox?"

or in Python:

    from tether.packs.google import google_pack, google_principal

    agent = Agent(model, google_pack(), principal=google_principal())

Every tool declares the tether scope `google:<scope>` of the narrowest Google scope it needs, and
`google_principal()` maps the scopes the user granted onto those, so the executor's scope guard refuses a
tool the sign-in cannot serve before Google is asked. Google's errors come back as envelopes (see
`_errors`), sending mail and deleting answer with a `needs` asking for the user's confirmation unless the
pack is built with `confirm=()`, and creating a calendar event or a Drive file twice is impossible by
construction (see `calendar` and `drive`). Importing this package imports nothing of Google's: the pack's
entry point is loaded whenever tether lists packs.
"""

from tether.packs.google._auth import ALL_SCOPES as ALL_SCOPES
from tether.packs.google._auth import READ_SCOPES as READ_SCOPES
from tether.packs.google._auth import GoogleAuth as GoogleAuth
from tether.packs.google._auth import google_principal as google_principal
from tether.packs.google._client import GoogleApi as GoogleApi
from tether.packs.google._kit import DEFAULT_CONFIRM as DEFAULT_CONFIRM
from tether.packs.google._pack import GOOGLE_PACK as GOOGLE_PACK
from tether.packs.google._pack import google_pack as google_pack
from tether.packs.google._scopes import principal_scopes as principal_scopes
from tether.packs.google.calendar import event_id as event_id

__all__ = [
    "ALL_SCOPES",
    "DEFAULT_CONFIRM",
    "GOOGLE_PACK",
    "READ_SCOPES",
    "GoogleApi",
    "GoogleAuth",
    "event_id",
    "google_pack",
    "google_principal",
    "principal_scopes",
]
