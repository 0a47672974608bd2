"""`create_app`: the FastAPI application serving a `ServeConfig`."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from tether.serve._auth import BodyLimit, Keys
from tether.serve._config import ServeConfig
from tether.serve._errors import install_error_handlers
from tether.serve._index import SerialSessionStore, SessionIndex
from tether.serve._routes import router
from tether.serve._runs import Runs
from tether.serve._served import Served
from tether.store import SqlJournal

__all__ = ["PAGE", "create_app"]

PAGE = Path(__file__).parent / "page"
"""The web chat page's static files, served at `/` when present."""


def create_app(config: ServeConfig) -> FastAPI:
    """The app: the agent API under `/api`, the OpenAI-compatible API under `/v1` (when installed), the web
    page at `/`, and FastAPI's `/openapi.json` and `/docs`. Stores open now; runs stop at shutdown."""
    journal = SqlJournal(config.database)
    index = SessionIndex(journal.engine)
    store = SerialSessionStore(index)
    served = Served(
        config=config,
        agents={a.name: a for a in config.agents},
        journal=journal,
        store=store,
        index=index,
        runs=Runs(index, store, grace_s=config.disconnect_grace_s),
        keys=Keys(config.keys, journal.rate_limits, config.rate_limit, frozenset(config.local_scopes)),
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with (
            contextlib.AsyncExitStack() as connections
        ):  # MCP servers: on this loop, for the app's life
            for agent in config.agents:
                for connection in agent.connections:
                    await connections.enter_async_context(connection)
            yield
            await served.runs.shutdown()  # every run answers its calls and releases its session: resumable

    app = FastAPI(
        title="tether",
        summary="Agents that use tools safely: sessions, messages and their runs' event streams.",
        lifespan=lifespan,
    )
    app.state.served = served
    install_error_handlers(app)
    app.include_router(router)
    _include_openai(app, served)
    app.add_middleware(BodyLimit, max_bytes=config.max_request_bytes)
    if config.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID", "Idempotency-Key"],
        )
    if (PAGE / "index.html").is_file():
        app.mount("/page", StaticFiles(directory=PAGE, html=True), name="page-files")
        app.mount("/", StaticFiles(directory=PAGE, html=True), name="page")
    return app


def _include_openai(app: FastAPI, served: Served) -> None:
    """The OpenAI-compatible router, when its module is part of this install."""
    try:
        module = importlib.import_module("tether.serve._openai")
    except ModuleNotFoundError as missing:
        if missing.name != "tether.serve._openai":
            raise
        return
    app.include_router(module.router(served))
