"""`tether serve`: the agent API, the web chat page and the OpenAI-compatible API over HTTP."""

from __future__ import annotations

import ipaddress
import socket
import webbrowser
from pathlib import Path
from typing import Annotated

import typer

from tether.cli._errors import console as plain_console
from tether.exceptions import UserError

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(  # pyright: ignore[reportUnusedFunction] - registered by the decorator
        config: Annotated[
            Path | None,
            typer.Argument(
                help="Agents and keys (YAML or JSON, see docs/serve.md). Default: the offline demo agent."
            ),
        ] = None,
        host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8700,
        db: Annotated[
            str | None,
            typer.Option(
                "--db",
                envvar="TETHER_SERVE_DB",
                help="Sessions and journal database, e.g. postgresql+psycopg://host/db for several workers. "
                "Default: tether-serve.db next to the config (or in the user data dir).",
            ),
        ] = None,
        open_page: Annotated[bool, typer.Option("--open", help="Open the chat page in a browser.")] = False,
    ) -> None:
        """Serve agents over HTTP: the chat page at /, the agent API, and an OpenAI-compatible API at /v1.

        Sessions' runs stream their events (SSE or NDJSON); the API's schema is at /docs.

        Without API keys in the config every request acts as the local user, so only a loopback address
        may be used.
        """
        try:
            import uvicorn

            from tether.serve import ServeConfig, create_app, default_agent, default_database, load_config
        except ImportError:
            raise UserError("tether serve needs the serve extra: pip install 'tether[serve]'.") from None

        if config is None:
            settings = ServeConfig(agents=[default_agent(Path.cwd())], database=db or default_database(None))
        else:
            settings = load_config(config, database=db)
        if not settings.keys and not _loopback(host):
            raise UserError(
                f"--host {host} would let anyone on the network act as you: this config has no API keys. "
                "Add `keys:` to the config (see docs/serve.md) or listen on 127.0.0.1."
            )
        listening = _bind(host, port)
        port = listening.getsockname()[1]  # --port 0: the port the system chose
        url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/"
        plain_console().print(
            f"tether serve: {', '.join(a.name for a in settings.agents)} at {url} (API docs: {url}docs)"
        )
        if open_page:
            webbrowser.open(url)
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(settings),
                log_level="warning",
                timeout_graceful_shutdown=5,  # streams still open then are closed; their runs end resumable
            )
        )
        server.run(sockets=[listening])


def _bind(host: str, port: int) -> socket.socket:
    """A socket listening on `host:port`, bound here so that a port in use is one clear line, not a log."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        raise UserError(f"--host {host} is not an address this machine can listen on: {error}.") from None
    listening = socket.socket(family, kind, proto)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind(address)
    except OSError as error:
        listening.close()
        raise UserError(
            f"cannot listen on {host}:{port}: {error.strerror or error}. Stop what uses the port, or pick "
            "another with --port (0: any free port)."
        ) from None
    return listening


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
        except (OSError, ValueError):
            return False
