"""Web search backends for `web_search`: DuckDuckGo's HTML page (no key) and the Brave Search API (a key).

A backend is anything with `search(query, limit) -> list[SearchResult]`; both here speak HTTP through an
`httpx.Client` the caller may supply (tests pass one with a `MockTransport`). Failures raise `SearchFailed`
with the HTTP status and `Retry-After`, which `web_search` turns into envelopes.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

__all__ = ["BraveSearch", "DuckDuckGoSearch", "SearchBackend", "SearchFailed", "SearchResult"]

_TAGS = re.compile(r"<[^>]+>")


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class SearchFailed(Exception):
    def __init__(self, message: str, *, status: int | None = None, retry_after: str | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class SearchBackend(Protocol):
    """Where `web_search` looks things up."""

    name: str

    def search(self, query: str, limit: int) -> list[SearchResult]: ...


def _client(client: Any) -> Any:
    if client is not None:
        return client
    import httpx  # the google extra (web_search ships beside the google pack)

    return httpx.Client(timeout=15.0, follow_redirects=True, headers={"User-Agent": "tether-web-search/1"})


def _get(client: Any, method: str, url: str, **kwargs: Any) -> Any:
    import httpx

    try:
        response = client.request(method, url, **kwargs)
    except httpx.HTTPError as error:
        raise SearchFailed(f"could not reach {urlsplit(url).hostname}: {error}") from None
    if response.status_code >= 400:
        raise SearchFailed(
            f"{urlsplit(url).hostname} answered {response.status_code}",
            status=response.status_code,
            retry_after=response.headers.get("retry-after"),
        )
    return response


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(_TAGS.sub("", fragment)).split())


class DuckDuckGoSearch:
    """DuckDuckGo's HTML results page: no key, no account (be gentle: it rate-limits busy clients).

    Args:
        url: The HTML endpoint (a test points it at a fake).
        client: An `httpx.Client` to use.
    """

    name = "duckduckgo"

    def __init__(self, url: str = "https://html.duckduckgo.com/html/", *, client: Any = None):
        self.url = url
        self._client = client

    def search(self, query: str, limit: int) -> list[SearchResult]:
        self._client = _client(self._client)
        response = _get(self._client, "POST", self.url, data={"q": query})
        parser = _DuckDuckGoPage()
        parser.feed(response.text)
        return parser.results[:limit]


class _DuckDuckGoPage(HTMLParser):
    """Collects `a.result__a` (title, link) and `.result__snippet` from DuckDuckGo's HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[SearchResult] = []
        self._field: str | None = None
        self._text: list[str] = []
        self._href = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "a" and "result__a" in classes:
            self._field, self._text, self._href = "title", [], _unwrap(dict(attrs).get("href") or "")
        elif "result__snippet" in classes:
            self._field, self._text = "snippet", []

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._field is None or tag not in ("a", "div", "td"):
            return
        text = " ".join("".join(self._text).split())
        if self._field == "title":
            self.results.append(SearchResult(text, self._href, ""))
        elif self.results and not self.results[-1].snippet:
            last = self.results[-1]
            self.results[-1] = SearchResult(last.title, last.url, text)
        self._field = None


def _unwrap(href: str) -> str:
    """DuckDuckGo wraps result links as `//duckduckgo.com/l/?uddg=<the real URL>`."""
    parts = urlsplit(href)
    if parts.path.startswith("/l/"):
        target = parse_qs(parts.query).get("uddg")
        if target:
            return target[0]
    return href


class BraveSearch:
    """The Brave Search API (a subscription token from api.search.brave.com).

    Args:
        api_key: The `X-Subscription-Token`.
        url: The web search endpoint (a test points it at a fake).
        client: An `httpx.Client` to use.
    """

    name = "brave"

    def __init__(
        self, api_key: str, url: str = "https://api.search.brave.com/res/v1/web/search", *, client: Any = None
    ):
        self.api_key = api_key
        self.url = url
        self._client = client

    def search(self, query: str, limit: int) -> list[SearchResult]:
        self._client = _client(self._client)
        response = _get(
            self._client,
            "GET",
            self.url,
            params={"q": query, "count": min(20, max(1, limit))},
            headers={"Accept": "application/json", "X-Subscription-Token": self.api_key},
        )
        try:
            results: list[dict[str, Any]] = response.json().get("web", {}).get("results", [])
        except ValueError:
            raise SearchFailed("Brave answered with something that is not JSON") from None
        return [
            SearchResult(
                _plain(str(r.get("title", ""))), str(r.get("url", "")), _plain(str(r.get("description", "")))
            )
            for r in results[:limit]
        ]
