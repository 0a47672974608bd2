"""The `web` pack: wget (seed 003) and api_call (seed 000).

`wget(uri, timeoutMs)`: GET only, the content as a string, and - as seed 003 asks - errors returned as
data (a string starting `Error:`), never raised. By default it reaches only public addresses, never this
machine or its network (so no cloud metadata endpoint either).

`api_call(url, method, headers, body)`: any method, but disabled unless the agent's configuration lists the
hosts it may call. Exact names are trusted wherever they resolve; `*.example.com` patterns must resolve to
public addresses. Both cap the response size.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from tether.exceptions import ToolError
from tether.tools import Toolset, tool
from tether.types import ErrorCode, SandboxPolicy

from ._http import FetchError, fetch
from ._registry import PackConfig, ToolPack, register_pack
from ._text import check_text

__all__ = ["WEB_PACK", "web_pack"]

_KEPT_HEADERS = ("content-type", "content-length", "location", "retry-after", "etag", "last-modified")


def web_pack(
    *,
    api_hosts: Sequence[str] = (),
    wget_hosts: Sequence[str] | None = None,
    max_bytes: int = 1024 * 1024,
    max_timeout_s: float = 30.0,
) -> Toolset:
    """HTTP tools.

    Args:
        api_hosts: Hosts api_call may reach (`api.example.com`, or `*.example.com`); empty disables it.
        wget_hosts: Restrict wget to these hosts (same forms); by default any host with a public address.
        max_bytes: The most of a response body returned.
        max_timeout_s: The longest a request may take, whatever timeout the model asks for.
    """
    api_allowed = _matcher(api_hosts)
    wget_allowed = _matcher(wget_hosts) if wget_hosts is not None else _any_public
    policy = SandboxPolicy(network=True, timeout_ms=int(max_timeout_s * 1000) + 5000)

    @tool(
        name="wget",
        category="web",
        side_effects="none",
        sandbox=policy,
        examples=[
            {"input": {"uri": "https://example.com", "timeoutMs": 5000}, "output": "<!doctype html>..."}
        ],
    )
    def wget(uri: str, timeoutMs: int = 10000) -> str:
        """Downloads content from a URI with timeout. Returns the content as a string.

        Args:
            uri: The http(s) URL to GET.
            timeoutMs: Give up after this many milliseconds.
        """
        try:
            response = fetch(
                uri,
                timeout_s=_timeout(timeoutMs, max_timeout_s),
                max_bytes=max_bytes,
                host_allowed=wget_allowed,
            )
        except FetchError as exc:
            return f"Error: {exc}"
        except ToolError as exc:
            return f"Error: {exc.message}"
        text = response.body.decode(_charset(response.headers), errors="replace")
        if response.status >= 400:
            return f"Error: HTTP {response.status} from {uri}\n{text[:2000]}"
        if response.truncated:
            text += f"\n[truncated at {max_bytes} bytes]"
        return text

    @tool(
        name="api_call",
        category="web",
        side_effects="mutating",
        requires_why=True,
        sandbox=policy,
        examples=[
            {
                "input": {"url": "https://api.example.com/v1/items", "method": "POST", "body": {"name": "x"}},
                "why": "Create the item the user asked for",
            }
        ],
    )
    def api_call(
        url: str,
        method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] = "GET",
        headers: dict[str, str] | None = None,
        body: Any = None,
        timeout_ms: int = 10000,
    ) -> dict[str, Any]:
        """Call an HTTP API on an allowed host.

        Args:
            url: The endpoint.
            method: The HTTP method.
            headers: Request headers.
            body: A JSON value (sent as JSON) or a string (sent as is).
            timeout_ms: Give up after this many milliseconds.
        """
        if not api_hosts:
            raise ToolError(
                ErrorCode.PERMISSION_DENIED,
                "api_call is disabled for this agent (no hosts are allowed)",
                recoverable=False,
                suggestion="Ask the user to allow the API's host; wget can GET public pages meanwhile.",
            )
        send_headers = dict(headers or {})
        data: bytes | None = None
        if isinstance(body, str):
            check_text(body, "body")
            data = body.encode()
        elif body is not None:
            data = json.dumps(body).encode()
            send_headers.setdefault("Content-Type", "application/json")
        try:
            response = fetch(
                url,
                method=method,
                headers=send_headers,
                body=data,
                timeout_s=_timeout(timeout_ms, max_timeout_s),
                max_bytes=max_bytes,
                host_allowed=api_allowed,
            )
        except FetchError as exc:
            code = {
                "invalid": ErrorCode.INVALID_ARGS,
                "refused": ErrorCode.PERMISSION_DENIED,
                "timeout": ErrorCode.TIMEOUT,
            }.get(exc.kind, "UNREACHABLE")
            hint = {
                "invalid": "Fix the URL or the headers as the message says.",
                "refused": f"Allowed hosts: {', '.join(api_hosts)}.",
            }.get(exc.kind, "Try again later.")
            raise ToolError(code, str(exc), suggestion=hint) from None
        return {
            "status": response.status,
            "headers": {k: v for k, v in response.headers.items() if k in _KEPT_HEADERS},
            "body": response.body.decode(_charset(response.headers), errors="replace"),
            "truncated": response.truncated,
        }

    return Toolset(wget, api_call)


def _matcher(hosts: Sequence[str]) -> Callable[[str], str | None]:
    exact = {h.lower() for h in hosts if not h.startswith("*.")}
    suffixes = tuple(h[1:].lower() for h in hosts if h.startswith("*."))

    def allowed(host: str) -> str | None:
        host = host.lower().rstrip(".")
        if host in exact:
            return "exact"
        if suffixes and host.endswith(suffixes):
            return "public"
        return None

    return allowed


def _any_public(_host: str) -> str | None:
    return "public"


def _timeout(ms: int, cap: float) -> float:
    if ms <= 0:
        raise ToolError(ErrorCode.INVALID_ARGS, "the timeout must be positive", suggestion="e.g. 10000")
    return min(ms / 1000, cap)


def _charset(headers: dict[str, str]) -> str:
    content_type = headers.get("content-type", "")
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            try:
                "".encode(value.strip('"'))
            except LookupError:
                break
            return value.strip('"')
    return "utf-8"


def _build(config: PackConfig) -> Toolset:
    return web_pack(api_hosts=config.http_allowed_hosts, wget_hosts=config.options.get("wget_hosts"))


WEB_PACK = register_pack(
    ToolPack("web", _build, "Web: wget (GET, public hosts), api_call (allow-listed hosts)")
)
