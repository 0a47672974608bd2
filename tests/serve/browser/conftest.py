"""The web page in a real browser: Chromium (Debian's) driven by Playwright against the real server.

One server and one browser per test module; each test gets a fresh browser context (its own storage) and
leaves a screenshot in the artifacts directory (`test-artifacts/browser/`, or `$TETHER_TEST_ARTIFACTS`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "fastapi", reason="the web page is served by the serve extra (pip install 'tether[serve]')"
)
pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright (the dev group)")

from playwright.sync_api import Browser, Page, sync_playwright

from .harness import ARTIFACTS, Server, serve

CHROMIUM = os.environ.get("TETHER_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(tmp_path_factory.mktemp("serve"))


# ---------------------------------------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        message = f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)  # never a browser Playwright would download
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser, server: Server, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh page on the chat, with speech recorded (headless Chromium has no voices to hear it with)."""
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.add_init_script(
        "window.__spoken = [];"
        "window.speechSynthesis.speak = (u) => { window.__spoken.push({text: u.text, rate: u.rate}); };"
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(  # e.g. a Content-Security-Policy violation; an HTTP status is the page's to handle, not an error
        "console",
        lambda m: errors.append(m.text)
        if m.type == "error" and "Failed to load resource" not in m.text
        else None,
    )
    page.set_default_timeout(10_000)
    try:
        yield page
        assert errors == [], f"the page raised: {errors}"
    finally:
        for gate in server.script.gates.values():  # a failed test leaves no call held
            gate.open()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"{request.node.name}.png"
        page.screenshot(path=shot, full_page=True)
        context.close()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if ARTIFACTS.exists():
        terminalreporter.write_line(f"browser screenshots: {ARTIFACTS}")
