"""An MCP server behind OAuth, with its own small authorization server, for the OAuth flow tests.

`python oauth_server.py [TOKEN_TTL_S]` listens on a free port and prints `listening on URL` when ready. One
origin serves:

- the authorization server: metadata (RFC 8414), dynamic client registration (RFC 7591), the authorization
  code grant with PKCE (S256 only), refresh tokens (rotated), each written here by hand;
- the MCP server (the SDK's), which accepts only live access tokens from it: its `whoami` tool answers the
  client id the token was issued to;
- `/stats` (what the authorization server did, counted) and `POST /revoke-all` (forget every token, as a
  server that restarted or revoked the grant would) for the tests.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import socket
import sys
import time
from collections import Counter
from typing import Any
from urllib.parse import urlencode

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

TTL_S = float(sys.argv[1]) if len(sys.argv) > 1 else 3600.0
SCOPE = "tools"
clients: dict[str, dict[str, Any]] = {}
codes: dict[str, dict[str, Any]] = {}  # code -> client_id, redirect_uri, challenge
access: dict[str, tuple[str, float]] = {}  # token -> client_id, expires at
refresh: dict[str, str] = {}  # token -> client_id
stats: Counter[str] = Counter()


def metadata(base: str) -> dict[str, Any]:
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": [SCOPE],
    }


def oauth_error(error: str, status: int = 400) -> JSONResponse:
    stats[f"refused {error}"] += 1
    return JSONResponse({"error": error}, status_code=status)


async def register(request: Request) -> Response:
    asked = await request.json()
    uris = asked.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        return oauth_error("invalid_redirect_uri")
    client_id = f"client-{secrets.token_hex(4)}"
    clients[client_id] = {**asked, "client_id": client_id, "token_endpoint_auth_method": "none"}
    stats["registrations"] += 1
    return JSONResponse(clients[client_id], status_code=201)


async def authorize(request: Request) -> Response:
    q = request.query_params
    client = clients.get(q.get("client_id", ""))
    if client is None or q.get("redirect_uri") not in client["redirect_uris"]:
        return oauth_error("invalid_client")  # never redirect to an unregistered URI
    if (
        q.get("response_type") != "code"
        or q.get("code_challenge_method") != "S256"
        or not q.get("code_challenge")
    ):
        return oauth_error("invalid_request")
    code = secrets.token_urlsafe(16)
    codes[code] = {
        "client_id": client["client_id"],
        "redirect_uri": q["redirect_uri"],
        "challenge": q["code_challenge"],
    }
    stats["authorizations"] += 1
    answer = {"code": code, **({"state": q["state"]} if "state" in q else {})}
    return RedirectResponse(f"{q['redirect_uri']}?{urlencode(answer)}", status_code=302)


def issue(client_id: str) -> JSONResponse:
    token, again = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    access[token] = (client_id, time.time() + TTL_S)
    refresh[again] = client_id
    return JSONResponse(
        {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": TTL_S,
            "refresh_token": again,
            "scope": SCOPE,
        },
        headers={"Cache-Control": "no-store"},
    )


async def token(request: Request) -> Response:
    form = await request.form()
    grant = form.get("grant_type")
    if grant == "authorization_code":
        found = codes.pop(str(form.get("code")), None)  # one use only
        verifier = str(form.get("code_verifier", ""))
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if found is None or found["client_id"] != form.get("client_id"):
            return oauth_error("invalid_grant")
        if found["redirect_uri"] != form.get("redirect_uri") or challenge != found["challenge"]:
            return oauth_error("invalid_grant")  # a wrong PKCE verifier: the code was stolen
        stats["code grants"] += 1
        return issue(found["client_id"])
    if grant == "refresh_token":
        holder = refresh.pop(str(form.get("refresh_token")), None)  # rotated: each refresh token once
        if holder is None or holder != form.get("client_id"):
            return oauth_error("invalid_grant")
        stats["refresh grants"] += 1
        return issue(holder)
    return oauth_error("unsupported_grant_type")


async def revoke_all(_: Request) -> Response:
    access.clear()
    refresh.clear()
    return JSONResponse({"revoked": True})


async def show_stats(_: Request) -> Response:
    return JSONResponse(dict(stats))


class Tokens:
    """The resource server's check: a token this authorization server issued, not yet expired."""

    async def verify_token(self, token: str) -> AccessToken | None:
        found = access.get(token)
        if found is None or found[1] < time.time():
            stats["tokens refused"] += 1
            return None
        stats["tokens accepted"] += 1
        return AccessToken(token=token, client_id=found[0], scopes=[SCOPE], expires_at=int(found[1]))


def main() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    base = f"http://127.0.0.1:{listener.getsockname()[1]}"
    auth = AuthSettings(
        issuer_url=base,  # pyright: ignore[reportArgumentType] - pydantic parses the URL
        resource_server_url=f"{base}/mcp",  # pyright: ignore[reportArgumentType]
        required_scopes=[SCOPE],
    )
    server = MCPServer("oauth-protected", token_verifier=Tokens(), auth=auth)

    @server.tool()
    def whoami() -> str:  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        """The client id the caller's access token was issued to."""
        token = get_access_token()
        return token.client_id if token is not None else "nobody"

    async def discovery(_: Request) -> Response:
        return JSONResponse(metadata(base))

    app = server.streamable_http_app()
    app.router.routes.extend([
        Route("/.well-known/oauth-authorization-server", discovery),
        Route("/register", register, methods=["POST"]),
        Route("/authorize", authorize),
        Route("/token", token, methods=["POST"]),
        Route("/revoke-all", revoke_all, methods=["POST"]),
        Route("/stats", show_stats),
    ])  # fmt: skip
    print(f"listening on {base}", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])


if __name__ == "__main__":
    main()
