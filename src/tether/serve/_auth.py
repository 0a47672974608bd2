"""Who is calling: `Authorization: Bearer <key>` -> the key's principal (keys are stored only hashed), each
key held to its request rate; and request bodies held to a size."""

from __future__ import annotations

import hmac
import json
from collections.abc import Sequence

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tether.execution import Principal
from tether.serve._config import ApiKey, hash_key
from tether.serve._errors import ApiError, error_body
from tether.store import RateLimits
from tether.types import RateLimit

__all__ = ["LOCAL", "BodyLimit", "Keys"]

LOCAL = "local"
"""The principal of every request when the server has no keys (it then listens on loopback only)."""


class Keys:
    """Resolves the caller of each request and applies its rate limit."""

    def __init__(
        self,
        keys: Sequence[ApiKey],
        rate_limits: RateLimits,
        limit: RateLimit | None,
        local_scopes: frozenset[str] = frozenset(),
    ):
        self.by_hash = {k.hash: k for k in keys}
        self.rate_limits = rate_limits
        self.limit = limit
        self.local = Principal(LOCAL, local_scopes)

    async def principal(self, authorization: str | None) -> Principal:
        principal = self.resolve(authorization)
        if self.limit is not None and self.by_hash:  # the local user alone (no keys) is not limited
            key = f"tether-serve:{principal.id}"
            wait = (
                await anyio.to_thread.run_sync(self.rate_limits.take, key, self.limit)
                if self.rate_limits.blocking
                else self.rate_limits.take(key, self.limit)
            )
            if wait > 0:
                seconds = max(1, round(wait + 0.5))
                raise ApiError(
                    429,
                    "RATE_LIMITED",
                    f"Too many requests for this key: at most {self.limit.calls} per {self.limit.per_seconds:g} s.",
                    f"Retry after {seconds} s.",
                    **{"Retry-After": str(seconds)},
                )
        return principal

    def resolve(self, authorization: str | None) -> Principal:
        if not self.by_hash:
            return self.local
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(
                401,
                "UNAUTHORIZED",
                "This server needs an API key.",
                "Send `Authorization: Bearer <your key>`.",
                **{"WWW-Authenticate": "Bearer"},
            )
        digest = hash_key(token.strip())
        # compare against every stored hash in constant time: no timing hint of which prefix matched
        found = [k for h, k in self.by_hash.items() if hmac.compare_digest(h, digest)]
        if not found:
            raise ApiError(
                401, "UNAUTHORIZED", "Unknown API key.", "Check the key; ask the server's operator for one.",
                **{"WWW-Authenticate": "Bearer"},
            )  # fmt: skip
        key = found[0]
        return Principal(key.principal, key.scopes)


class BodyLimit:
    """Refuses request bodies over `max_bytes` with 413, by their `Content-Length` or as they stream in."""

    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._refuse(send)
                return
        seen = 0
        refused = False

        async def limited() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if (
                    seen > self.max_bytes
                ):  # answer now; the app sees the client gone and its answer is dropped
                    refused = True
                    await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def sending(message: Message) -> None:
            if not refused:
                await send(message)

        await self.app(scope, limited, sending)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            error_body(
                "PAYLOAD_TOO_LARGE",
                f"The request body is larger than this server accepts ({self.max_bytes} bytes).",
                "Send less, e.g. split a long message.",
            )
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
