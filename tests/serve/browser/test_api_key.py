"""A server with API keys: the page asks for one only when the API answers 401, and remembers it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tether.serve import ApiKey, hash_key

from .harness import AGENT, Server, serve

KEY = "tk-browser-test-key-0123456789"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(tmp_path_factory.mktemp("serve-keys"), keys=[ApiKey(hash_key(KEY), "alice")])


def test_a_401_asks_for_the_key_once_and_the_page_then_works(page: Page, server: Server) -> None:
    server.script.reset("Signed in.")
    page.goto(server.url + "/")
    dialog = page.get_by_role("dialog", name="API key")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Key").fill("not-the-key")
    dialog.get_by_label("Key").press("Enter")
    expect(dialog).to_contain_text("refused the stored key")  # a wrong key: asked again, with why
    dialog.get_by_label("Key").fill(KEY)
    dialog.get_by_label("Key").press("Enter")

    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.get_by_label("Agent")).to_have_value(AGENT)
    box = page.get_by_role("textbox", name="Message")
    box.fill("Hello")
    box.press("Enter")
    expect(page.locator(".text.streamed")).to_have_text("Signed in.")
    assert page.evaluate("localStorage.getItem('tether.apiKey')") == KEY

    page.reload()  # remembered: not asked again
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(dialog).not_to_be_visible()
