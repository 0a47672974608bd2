"""`tether auth google` against a fake authorisation server on 127.0.0.1 (token and revoke endpoints)."""

import base64
import json
import os
import stat
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tether.exceptions import UserError
from tether.packs.google import GoogleAuth, google_principal

pytestmark = pytest.mark.usefixtures("oauth_over_loopback")

SCOPES = ["https://www.googleapis.com/auth/gmail.readonly", "https://www.googleapis.com/auth/tasks"]


class FakeAuthServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: list[tuple[str, dict[str, str]]] = []
        self.refusing = False

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    @property
    def fake(self) -> FakeAuthServer:
        assert isinstance(self.server, FakeAuthServer)
        return self.server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        form = {k: v[0] for k, v in urllib.parse.parse_qs(self.rfile.read(length).decode()).items()}
        if "Authorization" in self.headers:
            form["authorization"] = self.headers["Authorization"]
        self.fake.received.append((self.path, form))
        if self.path == "/revoke":
            self._answer(200, {})
        elif self.fake.refusing:
            self._answer(
                400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."}
            )
        elif form.get("grant_type") == "authorization_code":
            self._answer(200, {"access_token": "access-1", "refresh_token": "refresh-1", "expires_in": 3600,
                               "token_type": "Bearer", "scope": " ".join(SCOPES)})  # fmt: skip
        else:
            self._answer(200, {"access_token": "access-2", "expires_in": 3600, "token_type": "Bearer"})

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def oauth_over_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("google_auth_oauthlib", reason="the google extra is not installed")
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")  # the fake server speaks plain HTTP on loopback


@pytest.fixture
def server() -> Iterator[FakeAuthServer]:
    httpd = FakeAuthServer()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def auth(server: FakeAuthServer, tmp_path: Path) -> GoogleAuth:
    secrets = tmp_path / "client_secret.json"
    secrets.write_text(
        json.dumps(
            {
                "installed": {
                    "client_id": "cid.apps.googleusercontent.com",
                    "client_secret": "csecret",
                    "auth_uri": f"{server.base}/auth",
                    "token_uri": f"{server.base}/token",
                    "redirect_uris": ["http://localhost"],
                }
            }
        )
    )
    return GoogleAuth(
        directory=tmp_path / "config" / "google",
        client_secrets=secrets,
        revoke_uri=f"{server.base}/revoke",
        token_uri=f"{server.base}/token",
    )


def consent(prompt_or_url: str, code: str = "the-code") -> str:
    """What the user's browser ends on after they allow access: the redirect address with a code."""
    url = next(part for part in prompt_or_url.split() if part.startswith("http"))
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    return f"{query['redirect_uri'][0]}?state={query['state'][0]}&code={code}&scope={'+'.join(SCOPES)}"


def test_login_without_a_browser_exchanges_the_pasted_code_and_saves_the_token_0600(
    auth: GoogleAuth, server: FakeAuthServer
) -> None:
    shown: list[str] = []

    def ask(prompt: str) -> str:
        shown.append(prompt)
        return consent(prompt)

    auth.login(["gmail.readonly", "tasks"], browser=False, ask=ask)
    [(path, form)] = server.received
    assert path == "/token"
    basic = base64.b64encode(b"cid.apps.googleusercontent.com:csecret").decode()
    assert (form["grant_type"], form["code"], form["authorization"]) == (
        "authorization_code", "the-code", f"Basic {basic}",
    )  # fmt: skip
    asked = urllib.parse.parse_qs(urllib.parse.urlsplit(shown[0].split()[-2]).query)
    assert asked["scope"] == [" ".join(SCOPES)]
    assert asked["access_type"] == ["offline"]
    assert stat.S_IMODE(os.stat(auth.token_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(auth.directory).st_mode) == 0o700
    saved = json.loads(auth.token_path.read_text())
    assert (saved["token"], saved["refresh_token"]) == ("access-1", "refresh-1")
    assert auth.granted() == ("gmail.readonly", "tasks")
    assert google_principal(auth).scopes == {"google:gmail.readonly", "google:tasks", "google:tasks.readonly"}


def test_login_with_a_browser_catches_the_redirect_on_a_loopback_port(
    auth: GoogleAuth, server: FakeAuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Browser:
        def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
            def follow() -> None:
                with urllib.request.urlopen(consent(url), timeout=10) as page:
                    page.read()

            threading.Thread(target=follow, daemon=True).start()
            return True

    def get(using: str | None = None) -> Browser:
        return Browser()

    monkeypatch.setattr("webbrowser.get", get)
    auth.login(["gmail.readonly", "tasks"], browser=True)
    assert server.received[0][1]["code"] == "the-code"
    assert json.loads(auth.token_path.read_text())["token"] == "access-1"


def test_a_pasted_address_from_another_attempt_is_refused(auth: GoogleAuth, server: FakeAuthServer) -> None:
    with pytest.raises(UserError, match="another sign-in attempt"):
        auth.login(["gmail.readonly"], browser=False, ask=lambda p: consent(p).replace("state=", "state=x"))
    assert server.received == []
    assert not auth.token_path.exists()


def expired_token(auth: GoogleAuth, server: FakeAuthServer) -> None:
    auth.directory.mkdir(parents=True)
    past = (datetime.now(UTC) - timedelta(hours=1)).replace(tzinfo=None).isoformat() + "Z"
    auth.token_path.write_text(
        json.dumps({"token": "old", "refresh_token": "refresh-1", "token_uri": f"{server.base}/token",
                    "client_id": "cid", "client_secret": "csecret", "scopes": SCOPES, "expiry": past})
    )  # fmt: skip


def test_an_expired_token_is_refreshed_and_saved_again(auth: GoogleAuth, server: FakeAuthServer) -> None:
    expired_token(auth, server)
    credentials = auth.credentials()
    assert credentials.token == "access-2"
    assert server.received == [
        ("/token", {"grant_type": "refresh_token", "refresh_token": "refresh-1", "client_id": "cid",
                    "client_secret": "csecret", "scope": " ".join(SCOPES)})
    ]  # fmt: skip
    assert json.loads(auth.token_path.read_text())["token"] == "access-2"
    assert stat.S_IMODE(os.stat(auth.token_path).st_mode) == 0o600


def test_a_refused_refresh_asks_the_user_to_reauthorise(auth: GoogleAuth, server: FakeAuthServer) -> None:
    from tether.packs.google._errors import GoogleFailure

    expired_token(auth, server)
    server.refusing = True
    with pytest.raises(GoogleFailure) as raised:
        auth.credentials()
    error = raised.value.envelope.error
    assert error.code == "UNAUTHORIZED"
    assert error.details is not None
    assert error.details["reauth"]["command"] == "tether auth google --scope gmail.readonly --scope tasks"


def test_logout_revokes_the_refresh_token_and_deletes_it(auth: GoogleAuth, server: FakeAuthServer) -> None:
    expired_token(auth, server)
    assert auth.logout() is True
    assert server.received == [("/revoke", {"token": "refresh-1"})]
    assert not auth.token_path.exists()
    assert auth.logout() is False
    assert google_principal(auth).anonymous


def test_tether_auth_google_no_browser_signs_in_from_the_command_line(
    auth: GoogleAuth, server: FakeAuthServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tether.cli import app

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr("builtins.input", consent)
    assert auth.client_secrets is not None
    result = CliRunner().invoke(
        app,
        [
            "auth",
            "google",
            "--no-browser",
            "--scope",
            "gmail.readonly",
            "--scope",
            "tasks",
            "--client-secrets",
            str(auth.client_secrets),
        ],
    )
    assert result.exit_code == 0, result.output
    token = tmp_path / "config" / "tether" / "google" / "token.json"
    assert f"Token saved to {token} (mode 0600)" in result.output.replace("\n", "")
    assert stat.S_IMODE(os.stat(token).st_mode) == 0o600


def test_tether_auth_google_without_a_client_file_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tether.cli import app

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("TETHER_GOOGLE_CLIENT_SECRETS", raising=False)
    result = CliRunner().invoke(app, ["auth", "google", "--no-browser"])
    assert result.exit_code == 2
    assert "create an OAuth client of type 'Desktop app'" in result.output.replace("\n", " ")


class FakeKeyring:
    """The `keyring` package's module interface, over a dict, with a backend of the given priority."""

    def __init__(self, priority: float = 5.0) -> None:
        self.secrets: dict[tuple[str, str], str] = {}
        self.backend = type("Backend", (), {"priority": priority})()

    def get_keyring(self) -> Any:
        return self.backend

    def set_password(self, service: str, user: str, secret: str) -> None:
        self.secrets[(service, user)] = secret

    def get_password(self, service: str, user: str) -> str | None:
        return self.secrets.get((service, user))

    def delete_password(self, service: str, user: str) -> None:
        del self.secrets[(service, user)]


def test_with_keyring_the_token_lives_in_the_os_keyring_and_only_a_marker_on_disk(
    auth: GoogleAuth, server: FakeAuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses
    import sys

    keyring = FakeKeyring()
    monkeypatch.setitem(sys.modules, "keyring", keyring)
    in_keyring = dataclasses.replace(auth, keyring=True)
    in_keyring.login(["gmail.readonly", "tasks"], browser=False, ask=consent)
    assert json.loads(keyring.secrets[("tether", "google-token")])["refresh_token"] == "refresh-1"
    assert not auth.token_path.exists()
    assert "refresh-1" not in in_keyring.keyring_marker.read_text()
    assert auth.granted() == ("gmail.readonly", "tasks")  # the marker says where to look, flag or not
    assert auth.location == "the OS keyring (service 'tether')"
    assert auth.logout() is True
    assert keyring.secrets == {}
    assert not auth.keyring_marker.exists()


def test_keyring_without_a_usable_backend_names_the_fallback(
    auth: GoogleAuth, server: FakeAuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses
    import sys

    monkeypatch.setitem(sys.modules, "keyring", FakeKeyring(priority=0))
    with pytest.raises(UserError, match="sign in without --keyring"):
        dataclasses.replace(auth, keyring=True).login(["gmail.readonly", "tasks"], browser=False, ask=consent)


def test_a_corrupt_token_file_means_signing_in_again(auth: GoogleAuth) -> None:
    from tether.packs.google._errors import GoogleFailure

    auth.directory.mkdir(parents=True)
    auth.token_path.write_text("{not json")
    with pytest.raises(GoogleFailure) as raised:
        auth.credentials()
    assert raised.value.envelope.error.code == "UNAUTHORIZED"
    assert auth.granted() == ()
