"""Signing in to Google: the installed-app OAuth flow, the saved token, refreshing it, revoking it.

`GoogleAuth.login` runs google-auth-oauthlib's installed-app flow: with a browser, a loopback redirect
server catches the code; without one (a server over SSH), the user opens the printed URL anywhere and
pastes back the address their browser was sent to (or just its `code`). The token is saved as JSON in the
user's config directory (`$XDG_CONFIG_HOME/tether/google/token.json`, else `~/.config/...`), created 0600
in a 0700 directory, or with `keyring=True` (`--keyring`) in the OS keyring through the `keyring` package.
`credentials()` refreshes an expired access token with the refresh token and saves it
again; `logout()` revokes the token at Google and deletes the file.

The OAuth client (an "installed app" client id and secret from the Google Cloud console) is read from
`client_secret.json` beside the token, or from `TETHER_GOOGLE_CLIENT_SECRETS`.
"""

from __future__ import annotations

import importlib
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from tether.exceptions import UserError
from tether.execution import Principal
from tether.packs.google._errors import GoogleFailure, missing_extra, reauth_envelope
from tether.packs.google._scopes import google_scope_url, principal_scopes, short_name

__all__ = ["ALL_SCOPES", "READ_SCOPES", "GoogleAuth", "google_principal", "stored_credentials"]

READ_SCOPES = (
    "gmail.readonly",
    "drive.readonly",
    "calendar.readonly",
    "documents.readonly",
    "spreadsheets.readonly",
    "tasks.readonly",
)
"""What every read tool of the pack needs, and nothing that writes."""
ALL_SCOPES = (*READ_SCOPES, "gmail.send", "drive", "calendar.events", "documents", "spreadsheets", "tasks")
"""What every tool of the pack needs."""

REVOKE_URI = "https://oauth2.googleapis.com/revoke"
_KEYRING_SERVICE = "tether"
_KEYRING_USER = "google-token"

Ask = Callable[[str], str]
"""Shows the user a prompt and returns their answer (the pasted redirect address, for `browser=False`)."""


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tether" / "google"


@dataclass(frozen=True)
class GoogleAuth:
    """Where the Google sign-in lives and how it is renewed.

    Args:
        directory: Where `token.json` (and by default `client_secret.json`) are kept.
        client_secrets: The OAuth client file from the Google Cloud console.
        revoke_uri: Google's revocation endpoint (tests point it at a local fake).
        token_uri: Where to refresh tokens instead of Google's endpoint (tests); never read from the token
            file, so a tampered file cannot send the refresh token elsewhere.
        keyring: Keep the token in the OS keyring (the `keyring` package and a desktop session) instead of
            the file; only a marker saying so is written to `directory`.
    """

    directory: Path = field(default_factory=config_dir)
    client_secrets: Path | None = None
    revoke_uri: str = REVOKE_URI
    token_uri: str | None = None
    keyring: bool = False

    @property
    def token_path(self) -> Path:
        return self.directory / "token.json"

    @property
    def keyring_marker(self) -> Path:
        return self.directory / "token-in-keyring"

    @property
    def location(self) -> str:
        """Where the token is kept, for people."""
        if self.keyring or self.keyring_marker.exists():
            return f"the OS keyring (service {_KEYRING_SERVICE!r})"
        return f"{self.token_path} (mode 0600)"

    def secrets_path(self) -> Path:
        chosen = self.client_secrets or os.environ.get("TETHER_GOOGLE_CLIENT_SECRETS")
        path = Path(chosen) if chosen else self.directory / "client_secret.json"
        if not path.is_file():
            raise UserError(
                f"No Google OAuth client at {path}: create an OAuth client of type 'Desktop app' in the Google "
                "Cloud console, download its JSON, and pass --client-secrets FILE (or save it there)."
            )
        return path

    def login(
        self, scopes: Iterable[str] = ALL_SCOPES, *, browser: bool = True, ask: Ask | None = None
    ) -> Any:
        """Run the installed-app flow for `scopes` (short names or URLs), save the token, and return it.

        Args:
            browser: Open a browser and catch the redirect on a loopback port; `False` prints the URL and
                asks for the address the browser ended on (for machines without a browser).
            ask: How to ask for that address (the terminal's `input` by default).
        """
        try:
            from google_auth_oauthlib import flow as oauth_flow  # the google extra
        except ImportError as error:
            raise missing_extra(error) from None

        urls = [google_scope_url(short_name(s)) for s in scopes]
        installed: Any = oauth_flow.InstalledAppFlow  # untyped
        flow: Any = installed.from_client_secrets_file(str(self.secrets_path()), scopes=urls)
        if browser:
            credentials = flow.run_local_server(
                port=0, open_browser=True, access_type="offline", prompt="consent"
            )
        else:
            flow.redirect_uri = "http://localhost:1/"
            url, state = flow.authorization_url(access_type="offline", prompt="consent")
            answer = (ask or input)(
                f"Open this address in any browser, allow access, then paste the address it ends on "
                f"(it will not load; that is expected):\n{url}\n> "
            ).strip()
            flow.fetch_token(code=_code(answer, state))
            credentials = flow.credentials
        self.save(credentials)
        return credentials

    def save(self, credentials: Any) -> None:
        """Keep the token where this store keeps it: the OS keyring, or a file readable by this user only
        (0600 in a 0700 directory)."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.directory, 0o700)
        if self.keyring or self.keyring_marker.exists():
            _os_keyring().set_password(_KEYRING_SERVICE, _KEYRING_USER, credentials.to_json())
            self._write(self.keyring_marker, "the Google token is in the OS keyring\n")
            self.token_path.unlink(missing_ok=True)
            return
        self._write(self.token_path, credentials.to_json())

    def _write(self, path: Path, text: str) -> None:
        temporary = path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)

    def _load(self) -> dict[str, Any] | None:
        """The saved token's JSON; `None` when there is none (or it is unreadable: sign in again)."""
        if self.keyring_marker.exists():
            text = _os_keyring().get_password(_KEYRING_SERVICE, _KEYRING_USER)
        elif self.token_path.is_file():
            text = self.token_path.read_text(encoding="utf-8")
        else:
            return None
        try:
            data: Any = json.loads(text) if text else None
        except ValueError:
            return None
        return cast("dict[str, Any]", data) if isinstance(data, dict) else None

    def credentials(self) -> Any:
        """The saved credentials, refreshed (and saved again) if expired.

        Raises:
            GoogleFailure: UNAUTHORIZED asking to sign in again, when there is no token or Google refuses
                to refresh it.
        """
        from google.auth.exceptions import RefreshError  # the google extra
        from google.auth.transport.requests import Request
        from google.oauth2 import credentials as oauth2

        user_credentials: Any = oauth2.Credentials  # untyped

        data = self._load()
        if data is None:
            raise GoogleFailure(
                reauth_envelope("No Google account is connected (run `tether auth google`).", ())
            )
        credentials: Any = user_credentials.from_authorized_user_info(data)
        if self.token_uri is not None:
            expiry = credentials.expiry
            credentials = credentials.with_token_uri(self.token_uri)
            credentials.expiry = expiry  # the copy forgets it
        if not credentials.valid:
            try:
                credentials.refresh(Request())
            except RefreshError as error:
                granted = [short_name(s) for s in data.get("scopes") or ()]
                raise GoogleFailure(
                    reauth_envelope(f"Google refused to renew the sign-in: {error}", granted)
                ) from None
            self.save(credentials)
        return credentials

    def granted(self) -> tuple[str, ...]:
        """The Google scopes of the saved token (short names); empty when no one signed in."""
        data = self._load()
        if data is None:
            return ()
        return tuple(short_name(s) for s in data.get("scopes") or ())

    def logout(self) -> bool:
        """Revoke the saved token at Google and delete it; `False` when there was none."""
        data = self._load()
        if data is None:
            self.token_path.unlink(missing_ok=True)
            return False
        token = data.get("refresh_token") or data.get("token")
        if token:
            body = urllib.parse.urlencode({"token": token}).encode()
            request = urllib.request.Request(
                self.revoke_uri, data=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
            )
            try:
                with urllib.request.urlopen(request, timeout=30):
                    pass
            except urllib.error.HTTPError as error:
                if error.code != 400:  # 400: already revoked or expired, which is what was wanted
                    raise UserError(
                        f"Google did not revoke the token ({error.code}); try again later."
                    ) from None
            except OSError as error:
                raise UserError(
                    f"Could not reach Google to revoke the token: {error}. Try again later."
                ) from None
        if self.keyring_marker.exists():
            _os_keyring().delete_password(_KEYRING_SERVICE, _KEYRING_USER)
            self.keyring_marker.unlink()
        self.token_path.unlink(missing_ok=True)
        return True


def _os_keyring() -> Any:
    """The `keyring` package, when it is installed and this machine has a keyring it can use."""
    try:  # by name: optional, installed by the users who want it
        module: Any = importlib.import_module("keyring")
    except ImportError:
        raise UserError(
            "Keeping the token in the OS keyring needs the keyring package: pip install keyring."
        ) from None
    if getattr(module.get_keyring(), "priority", 0) <= 0:
        raise UserError(
            "No usable OS keyring here (a server without a desktop session?): sign in without --keyring to keep "
            "the token in a 0600 file instead."
        )
    return module


def stored_credentials() -> Any:
    """The credentials `tether auth google` saved, refreshed as needed (the pack's default source)."""
    return GoogleAuth().credentials()


def google_principal(auth: GoogleAuth | None = None, *, id: str = "google-user") -> Principal:
    """A principal holding the tether scopes the saved Google sign-in satisfies (anonymous without one)."""
    granted = (auth or GoogleAuth()).granted()
    if not granted:
        return Principal()
    return Principal(id=id, scopes=principal_scopes(granted))


def _code(answer: str, state: str) -> str:
    """The authorisation code in a pasted redirect address (checking its `state`), or the code itself."""
    if "://" not in answer and "code=" not in answer:
        if not answer:
            raise UserError("Nothing was pasted: run `tether auth google --no-browser` again.")
        return answer
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(answer).query or answer.partition("?")[2] or answer)
    if query.get("error"):
        raise UserError(f"Google did not grant access: {query['error'][0]}. Run `tether auth google` again.")
    if query.get("state", [state])[0] != state:
        raise UserError(
            "The pasted address belongs to another sign-in attempt; run `tether auth google` again."
        )
    codes = query.get("code")
    if not codes:
        raise UserError("The pasted address has no `code=`; paste the whole address the browser ended on.")
    return codes[0]
