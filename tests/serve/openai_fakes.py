"""For the OpenAI endpoint's tests: a fake upstream OpenAI-compatible server, and a real uvicorn on a free loopback
port to serve tether on (a helper module, not a conftest: the agent API's tests keep theirs)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass
class FakeUpstream:
    """Replays `pieces` as a Chat Completions stream, one chunk per piece; or misbehaves as `mode` says."""

    pieces: list[str] = field(default_factory=list[str])
    mode: str = "ok"
    """ok | slow (stalls after the first piece) | hang (stalls before its headers) | html | not_json | status |
    mid_error | key (401 without an Authorization header)"""
    requests: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    script: list[list[str]] = field(default_factory=list[list[str]])
    """Replies for the next requests, one each, before `pieces` is replayed again."""
    served: int = 0
    """Answers whose stream was read to its end."""
    cancelled: int = 0
    """Answers whose stream the reader closed before its end."""

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    async def _chat(self, request: Request) -> Response:
        self.requests.append(await request.json())
        if self.mode == "hang":  # never even answers the headers
            await asyncio.sleep(3)  # longer than the 0.5 s timeout under test
        if self.mode == "html":
            return HTMLResponse("<html><body>It works!</body></html>")
        if self.mode == "key" and not request.headers.get("authorization"):
            return JSONResponse({"error": {"message": "Incorrect API key provided"}}, status_code=401)
        if self.mode == "status":
            return JSONResponse({"error": {"message": "model overloaded"}}, status_code=503)
        pieces = self.script.pop(0) if self.script else self.pieces
        return StreamingResponse(self._events(pieces), media_type="text/event-stream")

    async def _events(self, pieces: list[str]) -> AsyncIterator[str]:
        try:
            async for event in self._replay(pieces):
                yield event
        except asyncio.CancelledError:
            self.cancelled += 1  # tether closed its request before the end
            raise

    async def _replay(self, pieces: list[str]) -> AsyncIterator[str]:
        for i, piece in enumerate(pieces):
            delta = {"content": piece} if i else {"role": "assistant", "content": piece}
            yield f"data: {json.dumps({'id': 'x', 'object': 'chat.completion.chunk', 'choices': [{'index': 0, 'delta': delta}]})}\n\n"
            if self.mode == "slow":
                await asyncio.sleep(3)  # longer than the 0.5 s timeout under test
        if self.mode == "not_json":
            yield "data: <html>oops</html>\n\n"
        if self.mode == "mid_error":
            yield f"data: {json.dumps({'error': {'message': 'CUDA out of memory'}})}\n\n"
        done: dict[str, Any] = {"index": 0, "delta": {}, "finish_reason": "stop"}
        usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
        yield f"data: {json.dumps({'id': 'x', 'object': 'chat.completion.chunk', 'choices': [done], 'usage': usage})}\n\n"
        yield "data: [DONE]\n\n"
        self.served += 1


def free_socket() -> socket.socket:
    """A listening-ready loopback socket on a free port (its URL is known before the app is built)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def running(app: Any, sock: socket.socket, *, lifespan: Literal["on", "off"] = "off") -> Iterator[None]:
    """Serve `app` with uvicorn on `sock` in a thread until the block ends."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=lifespan))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
