"""`GoogleApi`: the official client's services, built from the discovery documents bundled with it.

`build(..., static_discovery=True)` never fetches a discovery document, so building a service needs no
network. httplib2 connections are not thread-safe and sync tools run in threads, so each thread gets its own
services and collections (credentials are shared: google-auth refreshes them under its own lock).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tether.packs.google._errors import GoogleFailure, reauth_envelope

__all__ = ["GoogleApi"]

CredentialsSource = Callable[[], Any]
"""Returns google-auth credentials, or raises `GoogleFailure` (e.g. UNAUTHORIZED when no one signed in)."""


class GoogleApi:
    """Where the pack's tools reach Google.

    Args:
        credentials: Returns the user's google-auth credentials when a tool first needs them.
        http: An httplib2-like transport to use instead (tests pass `HttpMockSequence`); no credentials then.
    """

    def __init__(self, credentials: CredentialsSource | None = None, *, http: Any = None):
        self._credentials = credentials
        self._http = http
        self._local = threading.local()

    def resource(self, name: str, version: str, *path: str) -> Any:
        """A collection of one API, e.g. `resource("gmail", "v1", "users", "messages")`, made once per thread:
        the client builds every method of a collection each time one is asked for (~12 ms for Tasks)."""
        cache: dict[tuple[str, ...], Any] = self._local.__dict__.setdefault("resources", {})
        key = (name, version, *path)
        found = cache.get(key)
        if found is None:
            found = self.service(name, version)
            for step in path:
                found = getattr(found, step)()
            cache[key] = found
        return found

    def service(self, name: str, version: str) -> Any:
        """The client's service object for one API, e.g. `service("gmail", "v1")`."""
        cache: dict[tuple[str, str], Any] = self._local.__dict__.setdefault("services", {})
        found = cache.get((name, version))
        if found is None:
            from googleapiclient import discovery  # the google extra

            client: Any = discovery  # untyped
            build = client.build
            if self._http is not None:
                found = build(name, version, http=self._http, static_discovery=True, cache_discovery=False)
            else:
                found = build(
                    name, version, credentials=self._signed_in(), static_discovery=True, cache_discovery=False
                )
            cache[(name, version)] = found
        return found

    def _signed_in(self) -> Any:
        if self._credentials is None:
            raise GoogleFailure(reauth_envelope("No Google account is connected.", ()))
        return self._credentials()
