"""The app's frame: FastAPI's OpenAPI document lists the API, and the web page and the OpenAI-compatible
router are mounted when they are installed."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi import APIRouter, FastAPI

from tether.serve import _app

from .conftest import client, scripted

pytestmark = pytest.mark.anyio


async def test_the_openapi_document_lists_every_route_of_the_agent_api(
    make_app: Callable[..., FastAPI],
) -> None:
    async with client(make_app(scripted("a", ["hi"]))) as c:
        document = (await c.get("/openapi.json")).json()
        docs = await c.get("/docs")
    routes = {(path, method) for path, item in document["paths"].items() for method in item}
    assert routes >= {
        ("/api/agents", "get"),
        ("/api/sessions", "get"),
        ("/api/sessions", "post"),
        ("/api/sessions/{session_id}", "get"),
        ("/api/sessions/{session_id}/messages", "get"),
        ("/api/sessions/{session_id}/messages", "post"),
        ("/api/sessions/{session_id}/events", "get"),
        ("/api/sessions/{session_id}/needs", "post"),
        ("/api/sessions/{session_id}/cancel", "post"),
    }
    streamed = document["paths"]["/api/sessions/{session_id}/messages"]["post"]["responses"]["200"]["content"]
    assert set(streamed) >= {"text/event-stream", "application/x-ndjson"}
    assert docs.status_code == 200


async def test_the_page_is_served_at_the_root_when_installed(
    make_app: Callable[..., FastAPI], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_app, "PAGE", tmp_path / "not-installed")
    async with client(make_app(scripted("a", ["hi"]))) as c:
        absent = await c.get("/")
    (tmp_path / "index.html").write_text("<title>tether</title>", encoding="utf-8")
    (tmp_path / "app.js").write_text("// page", encoding="utf-8")
    monkeypatch.setattr(_app, "PAGE", tmp_path)
    async with client(make_app(scripted("a", ["hi"]))) as c:
        root, script, also = await c.get("/"), await c.get("/app.js"), await c.get("/page/app.js")
        api = await c.get("/api/agents")
    assert absent.status_code == 404
    assert "<title>tether</title>" in root.text
    assert script.text == also.text == "// page"
    assert api.status_code == 200  # the page does not shadow the API


async def test_the_openai_router_is_included_when_its_module_is_installed(
    make_app: Callable[..., FastAPI], monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[object] = []
    module = types.ModuleType("tether.serve._openai")

    def router(served: object) -> APIRouter:
        given.append(served)
        routes = APIRouter()

        @routes.get("/v1/models")
        def models() -> dict[str, str]:  # pyright: ignore[reportUnusedFunction] - registered by the decorator
            return {"object": "list"}

        return routes

    setattr(module, "router", router)  # noqa: B010 - a module made at run time
    monkeypatch.setitem(sys.modules, "tether.serve._openai", module)
    app = make_app(scripted("a", ["hi"]))
    async with client(app) as c:
        models = await c.get("/v1/models")
    assert models.json() == {"object": "list"}
    assert given == [app.state.served]
