"""The chat page in Chromium against the real server: tool calls live, needs, errors, speech, links,
sessions, keyboard use, and model output that tries to be HTML."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tether.exceptions import ModelError
from tether.models import ModelRequest
from tether.types import UserMessage

from .harness import AGENT, ARTIFACTS, END_TURN_AGENT, Server, calls


def open_chat(page: Page, server: Server, path: str = "/") -> None:
    page.goto(server.url + path)
    expect(page.locator("body")).to_have_attribute("data-ready", "true")


def send(page: Page, text: str) -> None:
    """Type a message and press Enter, as a user would."""
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")


def wait_for_the_run(page: Page) -> None:
    expect(page.locator(".thread:not([hidden])")).to_have_attribute("data-state", "idle")
    expect(page.locator(".run-end").last).to_be_visible()


def test_a_run_shows_each_tool_call_live_with_a_spinner_then_its_envelope(page: Page, server: Server) -> None:
    server.script.reset(
        calls(
            ("w1", "weather", {"city": "Oslo"}, "The user asked about the weather in Oslo"),
            ("c1", "convert", {"celsius": 21}, "They read temperatures in Fahrenheit"),
        ),
        "Oslo is 21 °C (69.8 °F) under a clear sky.",
    )
    for gate in server.script.gates.values():
        gate.close()
    open_chat(page, server)
    send(page, "What is the weather in Oslo?")

    weather = page.locator('article.tool[data-tool="weather"]')
    convert = page.locator('article.tool[data-tool="convert"]')
    for card, why, argument in (
        (weather, "The user asked about the weather in Oslo", '"city": "Oslo"'),
        (convert, "They read temperatures in Fahrenheit", '"celsius": 21'),
    ):
        expect(card.get_by_role("heading")).to_have_text(card.get_attribute("data-tool") or "")
        expect(card.locator(".tool-why")).to_have_text(why)
        expect(card.locator(".tool-args")).to_contain_text(argument)
        expect(card.get_by_role("status", name="running")).to_be_visible()  # the call is still running
        expect(card).to_have_attribute("aria-busy", "true")
    page.screenshot(path=_shot(page, "running"))

    for gate in server.script.gates.values():
        gate.open()
    expect(weather).to_have_attribute("data-state", "ok")
    expect(convert).to_have_attribute("data-state", "ok")
    expect(page.locator(".spinner")).to_have_count(0)
    expect(weather.locator(".envelope.ok")).to_contain_text('"sky": "clear"')
    expect(convert.locator(".envelope.ok")).to_contain_text('"fahrenheit": 69.8')
    expect(page.locator(".text.streamed")).to_have_text("Oslo is 21 °C (69.8 °F) under a clear sky.")
    wait_for_the_run(page)
    expect(page.locator("#key-dialog")).not_to_be_visible()  # no key is configured: none is asked for


def test_needs_is_a_form_whose_answer_continues_the_run(page: Page, server: Server) -> None:
    def book_with_the_answer(request: ModelRequest) -> str:
        """A model that reads the user's answer (it arrives as the next user message) and calls again."""
        answer = next(m.content for m in reversed(request.messages) if isinstance(m, UserMessage))
        date = re.search(r'"date": "([^"]*)"', answer)
        assert date, answer
        return calls(("b2", "book", {"city": "Oslo", "date": date[1]}, "The user said which day"))

    server.script.reset(
        calls(("b1", "book", {"city": "Oslo"}, "The user wants to go to Oslo")),
        "Which day do you travel?",
        book_with_the_answer,
        "Booked Oslo for Friday.",
    )
    open_chat(page, server)
    send(page, "Book me a trip to Oslo")

    form = page.get_by_role("form", name="Information the tool needs")
    field = form.get_by_label("Which day do you travel?")
    expect(field).to_be_focused()  # keyboard users land in it
    expect(page.locator('article.tool[data-tool="book"]')).to_have_attribute("data-state", "needs")
    wait_for_the_run(page)

    page.reload()  # the question outlives the page: reopening the chat shows the form again
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    page.get_by_role("button", name="Book me a trip to Oslo").click()
    field = page.get_by_role("form", name="Information the tool needs").get_by_label(
        "Which day do you travel?"
    )
    field.focus()
    page.keyboard.type("Friday")
    page.keyboard.press("Enter")

    expect(page.locator(".needs-answered")).to_have_text("Answered: date")
    expect(page.get_by_text("Booked Oslo for Friday.")).to_be_visible()
    assert server.script.bookings == [{"city": "Oslo", "date": "Friday"}]


def test_a_tool_error_shows_its_code_message_and_suggestion(page: Page, server: Server) -> None:
    server.script.reset(
        calls(("r1", "read_notes", {"path": "notes.txt"}, "The user asked what their notes say")),
        "I could not find notes.txt.",
    )
    open_chat(page, server)
    send(page, "What do my notes say?")

    card = page.locator('article.tool[data-tool="read_notes"]')
    expect(card).to_have_attribute("data-state", "error")
    expect(card.locator(".error-code")).to_have_text("NOT_FOUND")
    expect(card.locator(".error-message")).to_contain_text("no such file: notes.txt")
    expect(card.locator(".suggestion")).to_have_text(
        "Suggestion: Call list_notes to see the files that exist."
    )
    wait_for_the_run(page)


def test_a_failing_model_is_an_alert_and_the_run_still_ends(page: Page, server: Server) -> None:
    server.script.reset(ModelError("the provider answered 503"))
    open_chat(page, server)
    send(page, "Hello?")

    alert = page.get_by_role("alert")
    expect(alert.locator(".error-code")).to_have_text("MODEL_ERROR")
    expect(alert).to_contain_text("503")
    wait_for_the_run(page)
    expect(page.get_by_role("button", name="Send")).to_be_enabled()


def test_say_is_spoken_open_url_is_a_safe_link_and_send_chat_is_shown(page: Page, server: Server) -> None:
    server.script.reset(
        calls(
            ("s1", "say", {"utterance": "Here is the forecast", "style": "slow"}, "Greet the user aloud"),
            ("o1", "open_url", {"url": "https://example.org/forecast"}, "Show the full forecast"),
            ("o2", "open_url", {"url": "javascript:alert(1)"}, "A model tricked into a script URL"),
            ("m1", "send_chat", {"content": "Opening the forecast."}, "Tell the user what happens"),
        ),
        "Done.",
    )
    open_chat(page, server)
    send(page, "Forecast please")

    expect(page.locator(".speech")).to_have_text("Said aloud: Here is the forecast")
    assert page.evaluate("window.__spoken") == [{"text": "Here is the forecast", "rate": 0.75}]
    link = page.get_by_role("link", name="https://example.org/forecast")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(page.locator('article.tool[data-tool="open_url"][data-state="error"]')).to_have_count(1)
    expect(page.locator('a[href^="javascript"]')).to_have_count(0)
    expect(page.locator(".text.chat")).to_have_text("Opening the forecast.")
    wait_for_the_run(page)


def test_model_and_tool_output_is_shown_as_text_never_run_as_html(page: Page, server: Server) -> None:
    attack = '<img src=x onerror="window.__pwned=1">'
    server.script.reset(
        calls(("w1", "weather", {"city": attack}, f"why {attack}")),
        f"Here: {attack}",
    )
    open_chat(page, server)
    send(page, attack)

    wait_for_the_run(page)
    card = page.locator('article.tool[data-tool="weather"]')
    expect(card.locator(".tool-why")).to_have_text(f"why {attack}")
    expect(page.locator(".text.streamed")).to_have_text(f"Here: {attack}")
    expect(page.locator(".message.user")).to_have_text(attack)
    expect(page.locator(".thread img")).to_have_count(0)
    assert page.evaluate("window.__pwned") is None


def test_the_session_list_reopens_a_past_chat_with_its_tool_calls(page: Page, server: Server) -> None:
    server.script.reset(calls(("w1", "weather", {"city": "Lima"}, "Asked about Lima")), "Lima is clear.")
    open_chat(page, server)
    send(page, "Weather in Lima?")
    wait_for_the_run(page)
    first = page.locator("#session-list button[aria-current=page]")
    expect(first).to_have_count(1)
    first_id = first.get_attribute("data-session-id")

    page.get_by_role("button", name="New chat").click()
    server.script.reset("Hi there.")
    send(page, "Hello")  # at once: the message goes to the chat being created, not to the one still shown
    wait_for_the_run(page)
    current = page.locator("#session-list button[aria-current=page]")
    expect(current).to_have_text("Hello")
    second_id = current.get_attribute("data-session-id")
    assert second_id not in (None, first_id)

    page.reload()  # a fresh page: the chat is read back from the API, not from memory
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator(f'#session-list button[data-session-id="{second_id}"]')).to_be_visible()
    page.locator(f'#session-list button[data-session-id="{first_id}"]').click()
    thread = page.locator(f'.thread[data-session-id="{first_id}"]')
    expect(thread.locator(".message.user")).to_have_text("Weather in Lima?")
    expect(thread.locator('article.tool[data-tool="weather"]')).to_have_attribute("data-state", "ok")
    expect(thread.locator(".tool-args")).to_contain_text('"city": "Lima"')
    expect(thread).to_contain_text("Lima is clear.")
    expect(page).to_have_url(re.compile(f"#session={first_id}$"))


def test_the_page_works_from_the_keyboard_alone(page: Page, server: Server) -> None:
    server.script.reset("Typed without a mouse.")
    open_chat(page, server)
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the message box")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("textbox", name="Message")).to_be_focused()
    page.keyboard.type("Hello from the keyboard")
    page.keyboard.press("Enter")
    expect(page.locator(".text.streamed")).to_have_text("Typed without a mouse.")
    expect(page.get_by_role("log")).to_have_attribute("aria-live", "polite")


def _shot(page: Page, name: str) -> str:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return str(ARTIFACTS / f"{name}.png")


def test_the_page_also_works_from_its_files_path(page: Page, server: Server) -> None:
    server.script.reset("Served from /page/.")
    open_chat(page, server, "/page/")
    expect(page.get_by_label("Agent")).to_have_value(AGENT)
    send(page, "Hello")
    expect(page.locator(".text.streamed")).to_have_text("Served from /page/.")


def test_a_chat_opened_while_its_run_goes_on_follows_the_run(page: Page, server: Server) -> None:
    server.script.reset(calls(("w1", "weather", {"city": "Quito"}, "Asked about Quito")), "Quito is clear.")
    server.script.gates["weather"].close()
    open_chat(page, server)
    send(page, "Weather in Quito?")
    expect(page.locator('article.tool[data-tool="weather"] .spinner')).to_be_visible()
    session_id = page.locator(".thread:not([hidden])").get_attribute("data-session-id")

    other = page.context.new_page()  # a second tab, e.g. after the first one's browser was closed
    other.goto(server.url + "/")
    expect(other.locator("body")).to_have_attribute("data-ready", "true")
    other.locator(f'#session-list button[data-session-id="{session_id}"]').click()
    thread = other.locator(f'.thread[data-session-id="{session_id}"]')
    expect(thread.locator('article.tool[data-tool="weather"] .spinner')).to_be_visible()
    server.script.gates["weather"].open()
    expect(thread.locator('article.tool[data-tool="weather"]')).to_have_attribute("data-state", "ok")
    expect(thread).to_contain_text("Quito is clear.")
    expect(thread).to_have_attribute("data-state", "idle")
    expect(thread.locator("article.tool")).to_have_count(1)


def test_stop_cancels_the_run_and_every_running_call_is_answered(page: Page, server: Server) -> None:
    server.script.reset(calls(("w1", "weather", {"city": "Bergen"}, "Asked about Bergen")), "never reached")
    server.script.gates["weather"].close()
    open_chat(page, server)
    send(page, "Weather in Bergen?")
    card = page.locator('article.tool[data-tool="weather"]')
    expect(card.locator(".spinner")).to_be_visible()

    page.get_by_role("button", name="Stop").click()
    expect(card).to_have_attribute("data-state", "error")
    expect(card.locator(".error-code")).to_have_text("CANCELLED")
    expect(card.locator(".suggestion")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("cancelled")
    wait_for_the_run(page)
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    expect(page.get_by_role("button", name="Send")).to_be_enabled()


def test_an_end_turn_agent_chosen_for_a_new_chat_shows_its_send_chat_answer_once(
    page: Page, server: Server
) -> None:
    server.script.reset(
        calls(
            ("m1", "send_chat", {"content": "Looking it up."}, "Say what happens"),
            ("w1", "weather", {"city": "Oslo"}, "Asked about Oslo"),
        ),
        calls(
            ("m2", "send_chat", {"content": "Oslo is clear."}, "The answer"), ("e1", "end_turn", {}, "Done")
        ),
    )
    open_chat(page, server)
    page.get_by_label("Agent").select_option(END_TURN_AGENT)
    page.get_by_role("button", name="New chat").click()
    expect(page.get_by_role("heading", level=2, name=f"Chat with {END_TURN_AGENT}")).to_be_visible()
    send(page, "Weather in Oslo?")

    wait_for_the_run(page)
    expect(page.locator(".run-end")).to_have_text("Run ended: end_turn")
    expect(page.locator(".text.chat")).to_have_text(["Looking it up.", "Oslo is clear."])
    expect(page.get_by_text("Oslo is clear.", exact=True)).to_have_count(
        1
    )  # the run's output is that message


def test_a_long_result_is_folded_and_opens_from_the_keyboard(page: Page, server: Server) -> None:
    server.script.reset(calls(("l1", "list_notes", {}, "See which notes exist")), "You have 30 notes.")
    open_chat(page, server)
    send(page, "Which notes do I have?")
    wait_for_the_run(page)

    result = page.locator('article.tool[data-tool="list_notes"] .envelope.ok')
    summary = result.locator("summary")
    expect(summary).to_have_text("Result (32 lines)")
    expect(result.get_by_text("note-30.txt")).to_be_hidden()
    summary.focus()
    page.keyboard.press("Enter")
    expect(result.get_by_text("note-30.txt")).to_be_visible()
