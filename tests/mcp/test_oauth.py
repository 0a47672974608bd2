"""OAuth for a remote MCP server, offline: the SDK's `OAuthClientProvider` signing tether's client, against an
authorization server written in oauth_server.py (a real process), completed headlessly by following the
redirect. Discovery, dynamic registration, the code grant with PKCE, refresh on expiry, 401 -> sign in again."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tether.execution import Executor
from tether.mcp import MCPToolset
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall

OAUTH_SERVER = Path(__file__).with_name("oauth_server.py")
Listening = Callable[..., str]  # the `listening` fixture (conftest.py): starts a server, returns its URL
REDIRECT = "http://127.0.0.1:1/callback"  # never reached: the test reads the redirect's Location instead


class Memory:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Headless:
    """The user's browser, minus the user: opens the authorization URL and reads where it redirects."""

    def __init__(self) -> None:
        self.answer: AuthorizationCodeResult | None = None
        self.opened: list[str] = []

    async def redirect(self, url: str) -> None:
        self.opened.append(url)
        async with httpx2.AsyncClient() as browser:
            response = await browser.get(url)  # not followed: the redirect URI is the app's own
        assert response.status_code == 302, response.text
        location = urlparse(response.headers["location"])
        assert f"{location.scheme}://{location.netloc}{location.path}" == REDIRECT
        query = parse_qs(location.query)
        self.answer = AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])

    async def callback(self) -> AuthorizationCodeResult:
        assert self.answer is not None
        answer, self.answer = self.answer, None
        return answer


def provider(url: str, browser: Headless, storage: Memory) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(
        client_name="tether test",
        redirect_uris=[REDIRECT],  # pyright: ignore[reportArgumentType] - pydantic parses the URL
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope="tools",
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(url, metadata, storage, browser.redirect, browser.callback)


def whoami(toolset: MCPToolset) -> OkEnvelope | ErrorEnvelope:
    envelope = anyio.run(Executor(toolset).execute, ToolCall(id="c1", name="whoami"))
    assert not isinstance(envelope, dict)
    return envelope  # pyright: ignore[reportReturnType] - no tool here asks for input


def stats(base: str) -> dict[str, int]:
    return httpx2.get(f"{base}/stats").json()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the SDK's auth flow's socket
def test_the_full_flow_then_refresh_on_expiry_then_sign_in_again_after_a_401(listening: Listening) -> None:
    ttl_s = 3.0
    base = listening([sys.executable, str(OAUTH_SERVER), str(ttl_s)])
    assert (
        httpx2.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code
        == 401
    )
    browser, storage = Headless(), Memory()
    with MCPToolset.http(
        f"{base}/mcp", auth=provider(f"{base}/mcp", browser, storage), max_backoff_s=0.5
    ) as server:
        signed_in = whoami(server)  # discovery, registration, authorization with PKCE, token: then the call
        assert isinstance(signed_in, OkEnvelope)
        assert storage.client is not None
        assert signed_in.data == {"result": storage.client.client_id}  # the token was issued to this client
        authorize = parse_qs(urlparse(browser.opened[0]).query)
        assert authorize["code_challenge_method"] == ["S256"]
        assert len(authorize["code_challenge"][0]) >= 43
        after_sign_in = stats(base)
        assert (
            after_sign_in["registrations"],
            after_sign_in["authorizations"],
            after_sign_in["code grants"],
        ) == (1, 1, 1)
        assert not [k for k in after_sign_in if k.startswith("refused")]  # PKCE and the code checked out
        first = storage.tokens
        assert first is not None

        time.sleep(ttl_s + 0.5)  # the access token expires; the refresh token does not
        assert whoami(server) == signed_in
        assert stats(base)["refresh grants"] >= 1
        assert stats(base)["authorizations"] == 1  # refreshed, not signed in again
        assert storage.tokens is not None
        assert storage.tokens.access_token != first.access_token

        assert (
            httpx2.post(f"{base}/revoke-all").status_code == 200
        )  # every token forgotten: the next is a 401
        assert whoami(server) == signed_in
        assert stats(base)["authorizations"] == 2  # the provider signed in again, headlessly
        assert len(browser.opened) == 2
