"""web_search against local fakes of DuckDuckGo's HTML page and the Brave Search API (httpx MockTransport)."""

import json
from collections.abc import Callable
from typing import Any

import pytest

httpx = pytest.importorskip("httpx", reason="the google extra is not installed (it brings httpx)")

from tether.execution import Executor  # noqa: E402 - after the skip
from tether.packs.meowstik import BraveSearch, DuckDuckGoSearch, meowstik_tools  # noqa: E402
from tether.types import ErrorEnvelope, OkEnvelope, ToolCall  # noqa: E402

pytestmark = pytest.mark.anyio

DDG_PAGE = """<html><body>
<div class="result"><h2><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa&amp;rut=x">Example &amp; A</a></h2>
<a class="result__snippet" href="#">The <b>first</b> result.</a></div>
<div class="result"><h2><a class="result__a" href="https://example.org/b">Example B</a></h2>
<a class="result__snippet" href="#">Second one, with a much longer snippet that goes on and on about things.</a></div>
</body></html>"""


def client(handler: Callable[[Any], Any], seen: list[Any]) -> Any:
    def record(request: Any) -> Any:
        seen.append(request)
        return handler(request)

    return httpx.Client(transport=httpx.MockTransport(record))


async def search(backend: Any, **arguments: Any) -> Any:
    return await Executor(meowstik_tools(search=backend)).execute(
        ToolCall(id="w1", name="web_search", arguments=arguments)
    )


async def test_duckduckgo_posts_the_query_and_unwraps_result_links() -> None:
    seen: list[Any] = []
    backend = DuckDuckGoSearch(
        "https://ddg.test/html/", client=client(lambda r: httpx.Response(200, text=DDG_PAGE), seen)
    )
    envelope = await search(backend, query="tether runtime", maxTokens=500)
    assert envelope == OkEnvelope(
        data={
            "backend": "duckduckgo",
            "results": [
                {"title": "Example & A", "url": "https://example.com/a", "snippet": "The first result."},
                {"title": "Example B", "url": "https://example.org/b",
                 "snippet": "Second one, with a much longer snippet that goes on and on about things."},
            ],
            "approxTokens": 55,  # per result: ceil(len(title url snippet) / 4) + 8
        }
    )  # fmt: skip
    [request] = seen
    assert (request.method, str(request.url), request.content) == (
        "POST",
        "https://ddg.test/html/",
        b"q=tether+runtime",
    )


async def test_results_are_cut_to_max_tokens_with_a_notice() -> None:
    backend = DuckDuckGoSearch(
        "https://ddg.test/html/", client=client(lambda r: httpx.Response(200, text=DDG_PAGE), [])
    )
    envelope = await search(backend, query="tether", maxTokens=30)
    assert isinstance(envelope, OkEnvelope)
    assert [r["title"] for r in envelope.data["results"]] == ["Example & A"]
    assert envelope.data["approxTokens"] <= 30
    assert (
        envelope.data["notice"] == "[1 more results did not fit in maxTokens=30; raise maxTokens to see them]"
    )


def brave_answer(request: Any) -> Any:
    results = [
        {
            "title": "<strong>Tether</strong> docs",
            "url": "https://tether.test",
            "description": "Runs &amp; guards",
        }
    ]
    return httpx.Response(200, json={"web": {"results": results}})


async def test_brave_sends_the_key_and_query_and_strips_markup() -> None:
    seen: list[Any] = []
    backend = BraveSearch(
        "key-123", "https://brave.test/res/v1/web/search", client=client(brave_answer, seen)
    )
    envelope = await search(backend, query="tether")
    assert envelope == OkEnvelope(
        data={"backend": "brave", "results": [{"title": "Tether docs", "url": "https://tether.test",
              "snippet": "Runs & guards"}], "approxTokens": 20}
    )  # fmt: skip
    [request] = seen
    assert str(request.url) == "https://brave.test/res/v1/web/search?q=tether&count=10"
    assert request.headers["X-Subscription-Token"] == "key-123"


async def test_a_rate_limited_search_is_recoverable_with_retry_after() -> None:
    limited = client(lambda r: httpx.Response(429, headers={"Retry-After": "5"}, json={}), [])
    envelope = await search(BraveSearch("k", "https://brave.test/s", client=limited), query="x")
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.recoverable, envelope.error.details) == (
        "RATE_LIMITED", True, {"retry_after_s": 5.0, "status": 429},
    )  # fmt: skip


async def test_a_refused_key_is_unauthorized_and_an_unreachable_host_is_recoverable() -> None:
    refused = client(lambda r: httpx.Response(401, text=json.dumps({"error": "bad key"})), [])
    envelope = await search(BraveSearch("k", "https://brave.test/s", client=refused), query="x")
    assert isinstance(envelope, ErrorEnvelope)
    assert envelope.error.code == "UNAUTHORIZED"

    def down(request: Any) -> Any:
        raise httpx.ConnectError("connection refused", request=request)

    envelope = await search(DuckDuckGoSearch("https://ddg.test/html/", client=client(down, [])), query="x")
    assert isinstance(envelope, ErrorEnvelope)
    assert (envelope.error.code, envelope.error.recoverable) == ("UNREACHABLE", True)
