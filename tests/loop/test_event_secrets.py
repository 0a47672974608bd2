"""Attacks on the events a run hands out: no event carries a value a tool's schema marks secret, nor an echo
of one (docs/sessions.md, "Events"). Whatever forwards events (`tether serve`'s stream, the terminal, a
user's websocket) then shows `***`; only the tool gets the value."""

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from _secret_tools import (
    API_KEY,
    PASSWORD,
    PASSWORD_FIELD,
    RECOVERY,
    SECRET_NUMBER,
    SECRET_TEXT,
    TOKEN,
    hermes,
    marked,
    marked_login,
)
from tether import Agent, NeedsInput, ToolError, tool
from tether.exceptions import UserError
from tether.loop import Session, core_tools
from tether.models import Model, ModelChunk, ModelRequest, ScriptedModel, TextChunk
from tether.tools import REDACTED
from tether.types import (
    ChainEndEvent,
    ChatEvent,
    ChatModelStreamEvent,
    Event,
    NeedsEvent,
    ToolEndEvent,
    ToolStartEvent,
)

pytestmark = pytest.mark.anyio

PIN = 4821
SECRETS = [PASSWORD, API_KEY, *RECOVERY, TOKEN]
received: list[dict[str, Any]] = []


@tool(side_effects="none")
def login(user: str, password: str, pin: int, profile: dict[str, Any], codes: list[str]) -> dict[str, Any]:
    """Log in."""
    received.append({"password": password, "pin": pin, "profile": profile, "codes": codes})
    if password != PASSWORD:
        raise ToolError("DENIED", f"wrong password {password!r} for {user}", suggestion=f"not {password}")
    return {
        "greeting": f"welcome {user}, {password} works with key {profile['api_key']}",
        "token": TOKEN,
        "history": [f"used {codes[0]}"],
    }


LOGIN = marked_login(login, pin=SECRET_NUMBER)


@tool(side_effects="none")
def note(text: str) -> str:
    """Keep a note (nothing secret in its schema)."""
    return f"noted: {text}"


def login_call(password: str = PASSWORD, user: str = "ada") -> str:
    profile = {"name": "Ada", "api_key": API_KEY}
    return hermes("login", user=user, password=password, pin=PIN, profile=profile, codes=RECOVERY)


def leaks(events: list[Event]) -> list[str]:
    """The events (as JSON, as clients get them) that show a secret, or the PIN as a number."""
    found: list[str] = []
    for event in events:
        text = event.model_dump_json()
        if any(s in text for s in SECRETS) or f"{PIN}" in text:
            found.append(text)
    return found


async def run(
    turns: list[str], *, session: Session | None = None, chunk_size: int = 4, delay_s: float = 0.0
) -> tuple[Any, list[Event]]:
    seen: list[Event] = []
    model = ScriptedModel(turns, chunk_size=chunk_size, delay_s=delay_s)
    agent = Agent(model, [LOGIN, note], dialect="hermes")
    result = await agent.run("log me in", on_event=seen.append, session=session)
    return result, seen


async def test_no_event_shows_a_secret_argument_a_secret_result_or_their_echoes() -> None:
    received.clear()
    result, seen = await run(
        [
            login_call(),
            hermes("note", text=f"the key is {API_KEY}, the pin {PIN}"),  # echoed into a plain argument
            f"Done: token {TOKEN}, password {PASSWORD}.",  # and into the answer
        ]
    )
    assert received[0]["password"] == PASSWORD  # the tool got them
    assert received[0]["codes"] == RECOVERY
    assert leaks(seen) == []
    assert leaks(result.events) == []
    start = next(e for e in seen if isinstance(e, ToolStartEvent))
    assert start.call.arguments == {
        "user": "ada",
        "password": REDACTED,
        "pin": REDACTED,
        "profile": {"name": "Ada", "api_key": REDACTED},
        "codes": [REDACTED, REDACTED],
    }
    end = next(e for e in seen if isinstance(e, ToolEndEvent))
    assert end.envelope.model_dump()["data"] == {
        "greeting": f"welcome ada, {REDACTED} works with key {REDACTED}",
        "token": REDACTED,
        "history": [f"used {REDACTED}"],
    }
    noted = [e for e in seen if isinstance(e, ToolStartEvent)][1]
    assert noted.call.arguments == {"text": f"the key is {REDACTED}, the pin {REDACTED}"}
    final = next(e for e in seen if isinstance(e, ChainEndEvent))
    assert final.data == f"Done: token {REDACTED}, password {REDACTED}."
    assert [r.input for r in final.toolCalls][1] == {"text": f"the key is {REDACTED}, the pin {REDACTED}"}
    streamed = "".join(e.data for e in seen if isinstance(e, ChatModelStreamEvent))
    assert streamed == f"Done: token {REDACTED}, password {REDACTED}."
    assert (
        result.output == f"Done: token {TOKEN}, password {PASSWORD}."
    )  # the run's own result is the model's


async def test_an_error_message_quoting_the_password_shows_stars() -> None:
    wrong = "Wr0ng-pass-9y8x7w"
    _, seen = await run([login_call(password=wrong), "Sorry."])
    end = next(e for e in seen if isinstance(e, ToolEndEvent))
    text = end.model_dump_json()
    assert wrong not in text, text
    assert f"wrong password '{REDACTED}' for ada" in text
    assert f"not {REDACTED}" in text
    records = next(e for e in seen if isinstance(e, ChainEndEvent)).toolCalls
    assert wrong not in json.dumps([r.model_dump() for r in records])


async def test_a_plain_argument_echoing_a_secret_is_redacted_in_the_same_call() -> None:
    _, seen = await run([login_call(user=PASSWORD), "Done."])  # the model put the password in `user` too
    start = next(e for e in seen if isinstance(e, ToolStartEvent))
    assert start.call.arguments["user"] == REDACTED
    assert PASSWORD not in start.data
    assert leaks(seen) == []


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 7])
async def test_a_known_secret_split_across_streamed_chunks_never_shows(chunk_size: int) -> None:
    text = f"Your password is {PASSWORD} and again {PASSWORD}; Zq9 alone is not it, nor Zq9Kx7."
    _, seen = await run([text], session=Session(secrets={PASSWORD}), chunk_size=chunk_size)
    chunks = [e.data for e in seen if isinstance(e, ChatModelStreamEvent)]
    for chunk in chunks:  # not even a piece of it in any one chunk
        assert not any(PASSWORD[i : i + 4] in chunk for i in range(len(PASSWORD) - 3)) or "Zq9Kx7" in chunk
    # every character that is not the secret still reaches the client, in order
    expected = f"Your password is {REDACTED} and again {REDACTED}; Zq9 alone is not it, nor Zq9Kx7."
    assert "".join(chunks) == expected


@pytest.mark.parametrize("chunk_size", [1, 2, 4])
async def test_a_secret_split_by_a_call_the_stream_starts_never_shows(chunk_size: int) -> None:
    """The model's text around a call it makes mid-stream: the call starts (`on_tool_start`) between the two
    halves of the password; the first half waits until the second tells."""
    text = f"Your password is {PASSWORD[:9]}{hermes('note', text='x')}{PASSWORD[9:]}, kept."
    # a pause before each chunk: the stream waits, and the call it completed starts meanwhile
    _, seen = await run(
        [text, "Done."], session=Session(secrets={PASSWORD}), chunk_size=chunk_size, delay_s=0.002
    )
    kinds = [type(e) for e in seen]
    started = kinds.index(ToolStartEvent)
    assert (
        ChatModelStreamEvent in kinds[started : kinds.index(ChainEndEvent)][:4]
    )  # mid-stream, before the rest
    chunks = [e.data for e in seen if isinstance(e, ChatModelStreamEvent)]
    assert not any(PASSWORD[:4] in chunk for chunk in chunks), chunks
    assert "".join(chunks) == f"Your password is {REDACTED}, kept.Done."
    assert leaks(seen) == []


@pytest.mark.parametrize("chunk_size", [1, 2, 3])
async def test_a_short_secret_is_redacted_as_a_whole_word_only_across_chunks(chunk_size: int) -> None:
    text = "pin 4821, not 48215 nor 14821; 4821"
    _, seen = await run([text], session=Session(secrets={"4821"}), chunk_size=chunk_size)
    streamed = "".join(e.data for e in seen if isinstance(e, ChatModelStreamEvent))
    assert streamed == f"pin {REDACTED}, not 48215 nor 14821; {REDACTED}"


async def test_chat_sent_through_a_core_tool_does_not_show_a_secret_seen_before() -> None:
    @tool(side_effects="none")
    def reveal(secret: str) -> str:
        """Check a secret."""
        return "ok"

    seen: list[Event] = []
    model = ScriptedModel(
        [hermes("reveal", secret=API_KEY), hermes("send_chat", content=f"it was {API_KEY}"), "."]
    )
    await Agent(
        model, [marked(reveal, inputs={"secret": SECRET_TEXT}), *core_tools("send_chat")], dialect="hermes"
    ).run("go", on_event=seen.append)
    chats = [e.data for e in seen if isinstance(e, ChatEvent)]
    assert chats == [f"it was {REDACTED}"]
    assert leaks(seen) == []


async def test_a_needs_that_quotes_the_secret_shows_stars() -> None:
    @tool(side_effects="none")
    def verify(password: str, otp: str | None = None) -> str:
        """Verify a login."""
        if otp is None:
            raise NeedsInput(otp=f"The code sent for {password}?")
        return "ok"

    seen: list[Event] = []
    model = ScriptedModel([hermes("verify", password=PASSWORD), "Which code did you get?"])
    await Agent(model, [marked(verify, inputs={"password": PASSWORD_FIELD})], dialect="hermes").run(
        "verify", on_event=seen.append
    )
    needs = [e for e in seen if isinstance(e, NeedsEvent)]
    assert [e.needs for e in needs] == [{"otp": f"The code sent for {REDACTED}?"}]
    assert leaks(seen) == []


async def test_the_journal_of_a_tool_whose_schemas_mark_nothing_redacts_what_the_run_knows() -> None:
    """A secret named for the run (`Session.secrets`) and one a tool's schema marked earlier in the run, both
    echoed by `note`, whose schemas mark nothing: its journal entries (at rest, `tether audit`) show `***`."""
    model = ScriptedModel(
        [login_call(), hermes("note", text=f"pin {PIN}, word {PASSWORD}, key {API_KEY}"), "Done."]
    )
    agent = Agent(model, [LOGIN, note], dialect="hermes")
    await agent.run("log me in", session=Session(secrets={"Wm4Rb8Lp2-named"}))
    model = ScriptedModel([hermes("note", text="named Wm4Rb8Lp2-named"), "Done."])
    again = Agent(model, [LOGIN, note], dialect="hermes", executor=agent.executor)
    await again.run("note it", session=Session(secrets={"Wm4Rb8Lp2-named"}))

    entries = [e for e in agent.executor.journal.entries() if e.tool == "note"]
    assert len(entries) == 4  # an intent and a result a call
    text = json.dumps([dataclasses.asdict(e) for e in entries], default=str)
    assert not [s for s in [*SECRETS, f"pin {PIN}", "Wm4Rb8Lp2-named"] if s in text], text
    assert f"pin {REDACTED}, word {REDACTED}, key {REDACTED}" in text
    assert f"named {REDACTED}" in text


class _Stalls(Model):
    """Writes a short secret at the end of its text, then stalls (until cancelled) or fails with a bug."""

    def __init__(self, stalled: asyncio.Event, bug: bool):
        self.stalled = stalled
        self.bug = bug

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        yield TextChunk(text="your pin is 4821")
        self.stalled.set()  # asked for the next chunk: the last one has been shown (what of it could be)
        if self.bug:
            raise UserError("a bug of the developer's")
        await asyncio.Event().wait()


@pytest.mark.parametrize("bug", [False, True], ids=["cancelled", "a bug"])
async def test_streamed_text_held_back_when_the_run_ends_without_another_event_goes_out_redacted(
    bug: bool,
) -> None:
    seen: list[Event] = []
    stalled = asyncio.Event()
    agent = Agent(_Stalls(stalled, bug), [note], dialect="hermes")
    task = asyncio.create_task(agent.run("pin?", on_event=seen.append, session=Session(secrets={"4821"})))
    await asyncio.wait_for(stalled.wait(), 10)
    if not bug:
        task.cancel()
    with pytest.raises(asyncio.CancelledError if not bug else UserError):
        await task
    streamed = "".join(e.data for e in seen if isinstance(e, ChatModelStreamEvent))
    assert streamed == f"your pin is {REDACTED}"
