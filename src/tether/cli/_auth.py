"""`tether auth google`: sign in to Google for the google pack (installed-app OAuth), or `--logout`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tether.cli._errors import console as plain_console

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    auth = typer.Typer(help="Sign in to the services tool packs act on.", no_args_is_help=True)

    @auth.command("google")
    def google(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        scope: Annotated[
            list[str] | None,
            typer.Option(
                help="A Google scope to ask for, e.g. gmail.readonly (repeatable; default: all the pack's)."
            ),
        ] = None,
        read_only: Annotated[
            bool,
            typer.Option(
                "--read-only", help="Ask only for the read scopes (no sending, writing or deleting)."
            ),
        ] = False,
        no_browser: Annotated[
            bool,
            typer.Option(
                "--no-browser", help="Print the address to open elsewhere and paste back where it ends."
            ),
        ] = False,
        client_secrets: Annotated[
            Path | None,
            typer.Option(help="The OAuth client JSON ('Desktop app') from the Google Cloud console."),
        ] = None,
        keyring: Annotated[
            bool,
            typer.Option("--keyring", help="Keep the token in the OS keyring (needs the keyring package)."),
        ] = False,
        logout: Annotated[
            bool, typer.Option("--logout", help="Revoke the saved token and delete it.")
        ] = False,
    ) -> None:
        """Connect a Google account for the google pack.

        The token is kept in your config directory (0600), or with --keyring in the OS keyring, and is
        refreshed as needed."""
        from tether.packs.google import ALL_SCOPES, READ_SCOPES, GoogleAuth

        console = plain_console()
        store = GoogleAuth(client_secrets=client_secrets, keyring=keyring)
        if logout:
            revoked = store.logout()
            console.print(
                "Signed out: the token was revoked and deleted."
                if revoked
                else "No Google sign-in to remove."
            )
            return
        scopes = scope or (READ_SCOPES if read_only else ALL_SCOPES)
        store.login(scopes, browser=not no_browser)
        granted = ", ".join(store.granted())
        console.print(
            f"Signed in to Google. Token saved to {store.token_path} (mode 0600). Scopes: {granted}"
        )

    app.add_typer(auth, name="auth")
