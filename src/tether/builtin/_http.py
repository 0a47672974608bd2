"""A small, careful HTTP client for wget and api_call (stdlib only).

Every hop - the first request and each redirect - is checked: http(s) only, a host the caller allows, and
unless that host was allowed by exact name, addresses that are public (no loopback, private, link-local -
cloud metadata lives at 169.254.169.254 - multicast or reserved ranges). The connection goes to the address
that was checked, so a DNS answer cannot change between the check and the connect. Bodies are read up to a
cap, and the whole exchange has one deadline.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit

from ._text import surrogate_problem

__all__ = ["FetchError", "Response", "fetch"]

_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REDIRECTS = 5


class FetchError(Exception):
    """Why a request was refused or failed; `kind` is `invalid` (no such request can be sent), `refused`,
    `timeout` or `unreachable`."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Response:
    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    truncated: bool


def fetch(
    url: str,
    *,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    timeout_s: float,
    max_bytes: int,
    host_allowed: Callable[[str], str | None],
) -> Response:
    """Make one request, following redirects (GET/HEAD only) within the same rules.

    Args:
        host_allowed: host -> None (refused), "exact" (trusted, any address) or "public" (public addresses only).
    """
    deadline = time.monotonic() + timeout_s
    for _ in range(_MAX_REDIRECTS + 1):
        response = _once(url, method, headers or {}, body, deadline, max_bytes, host_allowed)
        location = response.headers.get("location")
        if response.status not in _REDIRECTS or not location or method not in ("GET", "HEAD"):
            return response
        url = urljoin(url, location)
    raise FetchError("refused", f"more than {_MAX_REDIRECTS} redirects")


def _once(
    url: str,
    method: str,
    headers: Mapping[str, str],
    body: bytes | None,
    deadline: float,
    max_bytes: int,
    host_allowed: Callable[[str], str | None],
) -> Response:
    if (problem := surrogate_problem(url)) is not None:
        raise FetchError("invalid", f"the URL {problem}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError("refused", f"only http and https URLs can be fetched, not {url!r}")
    if parts.username or parts.password:
        raise FetchError("refused", "URLs with credentials are not fetched")
    host = parts.hostname
    try:
        host.encode("idna")  # what resolving it does; a label over 63 characters, say, cannot be
    except UnicodeError:
        raise FetchError("invalid", f"{host[:100]!r} is not a valid host name") from None
    _check_headers(headers)
    trust = host_allowed(host)
    if trust is None:
        raise FetchError("refused", f"host {host!r} is not allowed")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = _address(host, port, public_only=trust != "exact", deadline=deadline)
    conn = _connection(parts.scheme, host, address, port, _remaining(deadline))
    try:
        # the request line is ASCII: anything else (non-ASCII letters, spaces, line breaks) is percent-encoded
        path = _UNSAFE.sub(_escaped, (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        conn.request(method, path, body=body, headers={"User-Agent": "tether", **headers})
        raw = conn.getresponse()
        data = raw.read(max_bytes + 1)
        return Response(
            url=url,
            status=raw.status,
            headers={k.lower(): v for k, v in raw.getheaders()},
            body=data[:max_bytes],
            truncated=len(data) > max_bytes,
        )
    except TimeoutError:
        raise FetchError("timeout", f"no complete answer from {host} in time") from None
    except (OSError, http.client.HTTPException) as exc:
        raise FetchError("unreachable", f"{host}: {exc}") from None
    finally:
        conn.close()


_UNSAFE = re.compile(r"[^\x21-\x7e]")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _escaped(match: re.Match[str]) -> str:
    return quote(match.group(), safe="")


def _check_headers(headers: Mapping[str, str]) -> None:
    """Headers http.client would refuse with a bare ValueError, refused with what to change instead."""
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise FetchError("invalid", f"{name[:100]!r} is not a valid header name (letters, digits, -)")
        if any(ch in value for ch in "\r\n\x00"):
            raise FetchError("invalid", f"the value of header {name!r} holds a line break or NUL")
        try:
            value.encode("latin-1")
        except UnicodeEncodeError:
            raise FetchError(
                "invalid", f"the value of header {name!r} is not Latin-1 text (percent-encode it)"
            ) from None


def _address(host: str, port: int, *, public_only: bool, deadline: float) -> str:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise FetchError("unreachable", f"cannot resolve {host}: {exc}") from None
    if time.monotonic() > deadline:
        raise FetchError("timeout", f"resolving {host} took too long")
    addresses = [str(info[4][0]) for info in infos]
    if public_only:
        private = [a for a in addresses if not ipaddress.ip_address(a.split("%")[0]).is_global]
        if private:
            raise FetchError("refused", f"{host} resolves to a non-public address ({private[0]})")
    return addresses[0]


def _connection(
    scheme: str, host: str, address: str, port: int, timeout: float
) -> http.client.HTTPConnection:
    """A connection to the checked `address`, speaking to (and, for https, verifying) `host`."""
    if scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            host, port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)

    def pinned(_address: object, *_args: object) -> socket.socket:  # connect to the address that was checked
        return socket.create_connection((address, port), timeout)

    conn._create_connection = pinned  # pyright: ignore[reportAttributeAccessIssue]  # http.client's own hook
    return conn


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchError("timeout", "out of time")
    return left
