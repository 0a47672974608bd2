"""A dropped connection mid-run: the page follows the run again from the last event it showed, so the
transcript ends up exactly as if nothing had happened, with no event lost or shown twice."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from .harness import CuttingProxy, Server, calls

FINAL = "Both calls are done; " + "this answer streams in many small pieces after the cut. " * 4


@pytest.fixture
def proxy(server: Server) -> Iterator[CuttingProxy]:
    proxy = CuttingProxy(server.url)
    yield proxy
    proxy.close()


@pytest.mark.parametrize(
    "replay",
    [
        pytest.param("after_seen", id="server-replays-after-the-last-seen-event"),
        pytest.param("all", id="server-replays-everything-and-the-page-skips-what-it-showed"),
    ],
)
def test_a_dropped_stream_is_followed_again_without_losing_or_repeating_events(
    page: Page, server: Server, proxy: CuttingProxy, replay: str
) -> None:
    if (
        replay == "all"
    ):  # a replay that overlaps what the page already showed (e.g. a server that ignores ids)
        page.route(
            re.compile(r".*/events\?after=\d+$"),
            lambda route: route.continue_(url=re.sub(r"after=\d+$", "after=0", route.request.url)),
        )
    server.script.reset(
        calls(("w1", "weather", {"city": "Oslo"}, "The user asked about Oslo")),
        calls(("c1", "convert", {"celsius": 21}, "They read Fahrenheit")),
        FINAL,
    )
    weather_gate, convert_gate = server.script.gates["weather"], server.script.gates["convert"]
    weather_gate.close()
    convert_gate.close()
    page.goto(proxy.url + "/")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    box = page.get_by_role("textbox", name="Message")
    box.fill("Weather in Oslo, in Fahrenheit?")
    box.press("Enter")

    weather = page.locator('article.tool[data-tool="weather"]')
    expect(weather.get_by_role("status", name="running")).to_be_visible()
    thread = page.locator(".thread:not([hidden])")
    seen = int(thread.get_attribute("data-last-seq") or "0")
    assert seen > 0
    assert proxy.cut() > 0  # the network drops while the call runs ...
    weather_gate.open()  # ... and the run goes on without anyone watching: these events must be replayed

    convert = page.locator('article.tool[data-tool="convert"]')
    expect(convert.get_by_role("status", name="running")).to_be_visible()
    session_id = thread.get_attribute("data-session-id")
    reconnects = [r for r in proxy.requests if r.startswith(f"GET /api/sessions/{session_id}/events")]
    assert reconnects == [
        f"GET /api/sessions/{session_id}/events?after={seen if replay == 'after_seen' else 0}"
    ]
    convert_gate.open()  # what follows arrives live on the new connection

    expect(thread).to_have_attribute("data-state", "idle")
    expect(weather).to_have_attribute("data-state", "ok")
    expect(convert).to_have_attribute("data-state", "ok")
    expect(page.locator("article.tool")).to_have_count(2)
    expect(page.locator(".text.streamed")).to_have_text(FINAL.strip())
    expect(page.locator(".run-end")).to_have_count(1)
    events = _events(server, str(session_id))
    assert events[-1]["event"] == "on_chain_end"
    assert thread.get_attribute("data-last-seq") == str(len(events))  # every event, each once


def _events(server: Server, session_id: str) -> list[dict[str, object]]:
    """The whole run as the server recorded it (a replay from the start)."""
    request = urllib.request.Request(
        f"{server.url}/api/sessions/{session_id}/events?after=0", headers={"Accept": "application/x-ndjson"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return [json.loads(line) for line in response.read().decode().splitlines() if line.strip()]


def test_a_server_with_nothing_more_of_an_unfinished_run_stops_the_page_following_it(
    page: Page, server: Server, proxy: CuttingProxy
) -> None:
    server.script.reset(calls(("w1", "weather", {"city": "Oslo"}, "Asked about Oslo")), "Clear.")
    server.script.gates["weather"].close()
    page.route(  # e.g. a server restarted without the run: a well-formed stream with no event in it
        re.compile(r".*/events\?after=\d+$"),
        lambda route: route.fulfill(status=200, content_type="text/event-stream", body=": nothing here\n\n"),
    )
    page.goto(proxy.url + "/")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    box = page.get_by_role("textbox", name="Message")
    box.fill("Weather in Oslo?")
    box.press("Enter")
    expect(page.locator('article.tool[data-tool="weather"] .spinner')).to_be_visible()
    proxy.cut()

    expect(page.locator(".notice .error-code")).to_have_text("STREAM_ENDED")
    expect(page.locator(".notice .suggestion")).to_contain_text("Reload the page")
    expect(page.locator(".thread:not([hidden])")).to_have_attribute("data-state", "idle")
    expect(page.locator("#connection")).to_have_text("")
    expect(page.locator('article.tool[data-tool="weather"]')).to_have_attribute("data-state", "unanswered")
