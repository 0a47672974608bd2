"""A Google pack whose real client talks to `HttpMockSequence`: every request it sends is kept for asserting."""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tether.execution import Executor, Principal, Run
from tether.types import AnyEnvelope, ToolCall


@dataclass(frozen=True)
class Sent:
    method: str
    host: str
    path: str
    query: dict[str, Any]
    body: Any


def reply(status: int = 200, body: Any = None, **headers: str) -> tuple[dict[str, str], str]:
    """One response for HttpMockSequence: a status, a JSON body and headers."""
    return ({"status": str(status), **headers}, json.dumps(body if body is not None else {}))


def google_error(status: int, message: str, reason: str = "") -> str:
    errors = [{"reason": reason, "message": message}] if reason else []
    return json.dumps({"error": {"code": status, "message": message, "errors": errors}})


class FakeGoogle:
    """The pack over a mocked HTTP layer; `calls` run through a real executor with a principal holding every
    scope, `sent` is what the client put on the wire."""

    def __init__(self, confirm: tuple[str, ...] | None = None) -> None:
        from googleapiclient.http import HttpMockSequence

        from tether.packs.google import DEFAULT_CONFIRM, google_pack, principal_scopes
        from tether.packs.google._auth import ALL_SCOPES

        self.http = HttpMockSequence([])
        self.tools = google_pack(http=self.http, confirm=DEFAULT_CONFIRM if confirm is None else confirm)
        self.executor = Executor(self.tools)
        self.principal = Principal(id="ana", scopes=principal_scopes(ALL_SCOPES))

    def respond(self, *responses: tuple[dict[str, str], str]) -> None:
        self.http._iterable.extend(responses)  # pyright: ignore[reportPrivateUsage] - the mock's queue

    async def call(self, tool: str, /, *, call_id: str = "c1", **arguments: Any) -> AnyEnvelope:
        run = Run(principal=self.principal, session_id="s1")
        return await self.executor.execute(ToolCall(id=call_id, name=tool, arguments=arguments), run)

    @property
    def sent(self) -> list[Sent]:
        out: list[Sent] = []
        mock: Any = self.http  # untyped
        requests: list[tuple[str, str, Any, Any]] = mock.request_sequence
        for uri, method, body, _headers in requests:
            parts = urlsplit(uri)
            query: dict[str, Any] = {k: v if len(v) > 1 else v[0] for k, v in parse_qs(parts.query).items()}
            if query.get("alt") == "json":  # what the client adds to every JSON request
                del query["alt"]
            out.append(Sent(method, parts.netloc, parts.path, query, _body(body)))
        return out


def _body(body: Any) -> Any:
    if body is None:
        return None
    text = body.decode() if isinstance(body, bytes) else str(body)
    try:
        return json.loads(text)
    except ValueError:
        return text


@pytest.fixture
def google() -> Iterator[FakeGoogle]:
    pytest.importorskip(
        "googleapiclient", reason="the google extra is not installed (uv sync --extra google)"
    )
    fake = FakeGoogle()
    yield fake
    assert not fake.http._iterable, "every scripted response was used"  # pyright: ignore[reportPrivateUsage]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
