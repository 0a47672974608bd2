"""Secrets at rest in a session: what a tool's schema marks secret never reaches the database in clear, not
in the call's arguments, nor where the model wrote it (its raw output, its text), nor where a tool echoed it.

The attack: a run that fetches an API key (an output marked secret), logs in with a password and a PIN
(inputs marked secret), writes the key into another tool's plain argument and its own text, and gets the
password echoed back; then the database is searched for every secret, on SQLite as file bytes (the WAL
too) and on PostgreSQL as the stored text. The ASCII cores searched for survive any JSON escaping.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import text

from _secret_tools import PASSWORD_FIELD, SECRET_NUMBER, SECRET_TEXT, hermes, marked
from tether.execution import Executor
from tether.loop import Agent, Session
from tether.models import ScriptedModel
from tether.store import SessionStore, SqlJournal
from tether.tools import REDACTED, Tool, tool
from tether.types import AssistantMessage, ErrorEnvelope, ToolResultMessage, UserMessage

pytestmark = pytest.mark.anyio

API_KEY = "sk-live-7d3f9a2b4c"
PASSWORD = 'hü"nter-Zq9Kx7'  # non-ASCII and a quote: JSON escapes it in the model's raw call
PIN = 9081726354
TOKEN = "tok-Wm4Rb8Lp2"
CORES = ["7d3f9a2b4c", "Zq9Kx7", str(PIN), "Wm4Rb8Lp2"]
OpenStore = Callable[[str], SessionStore]
notes: list[str] = []
logins: list[str] = []


@tool(side_effects="none")
def vault(name: str) -> dict[str, str]:
    """Fetch a credential."""
    return {"name": name, "key": API_KEY}


@tool
def login(user: str, password: str, pin: int) -> dict[str, str]:
    """Log in."""
    logins.append(password)
    if password != PASSWORD or pin != PIN:
        return {"user": user, "greeting": "wrong password", "token": ""}
    return {"user": user, "greeting": f"welcome {user}, {password} works", "token": TOKEN}


@tool
def note(text: str) -> str:
    """Write a note."""
    notes.append(text)
    return f"noted: {text}"


VAULT = marked(vault, outputs={"name": {"type": "string"}, "key": SECRET_TEXT})
LOGIN = marked(
    login, inputs={"password": PASSWORD_FIELD, "pin": SECRET_NUMBER}, outputs={"token": SECRET_TEXT}
)
TOOLS: list[Tool[..., Any]] = [VAULT, LOGIN, note]


SCRIPT = [
    hermes("vault", name="mail"),
    f"Logging in with the key {API_KEY} and your password {PASSWORD}.\n"
    + hermes("login", user="ada", password=PASSWORD, pin=PIN)
    + hermes("note", text=f"mail key is {API_KEY}, pin {PIN}"),
    f"Done: you are logged in, your token is {TOKEN}.",
]


@pytest.fixture
def open_store() -> Iterator[Callable[[str], SessionStore]]:
    """Opens `SessionStore`s whose connections are closed when the test ends."""
    opened: list[SessionStore] = []

    def open_(url: str) -> SessionStore:
        opened.append(SessionStore(url))
        return opened[-1]

    yield open_
    for store in opened:
        store.engine.dispose()


def stored_text(url: str, store: SessionStore) -> str:
    """Everything the database holds: the SQLite file's bytes (and its WAL's), or PostgreSQL's rows as text."""
    if url.startswith("sqlite"):
        path = Path(url.removeprefix("sqlite:///"))
        files = [p for p in (path, path.with_name(path.name + "-wal")) if p.exists()]
        return b"".join(p.read_bytes() for p in files).decode("latin-1")
    with store.engine.connect() as connection:
        tables = connection.execute(
            text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        ).scalars()
        return "".join(
            str(row)
            for table in list(tables)
            for row in connection.execute(text(f'SELECT t::text FROM "{table}" t')).scalars()
        )


async def test_no_secret_reaches_the_session_database_and_the_stored_run_resumes(
    journal_url: str, open_store: OpenStore
) -> None:
    notes.clear()
    store = open_store(journal_url)
    model = ScriptedModel(SCRIPT)
    session = Session("s1", store)
    result = await Agent(model, TOOLS, dialect="hermes").run("Log me in to my mail", session=session)
    assert result.output == f"Done: you are logged in, your token is {TOKEN}."
    assert notes == [f"mail key is {API_KEY}, pin {PIN}"]  # the run itself used the real values
    assert any(
        PASSWORD in (m.raw or "") or "Zq9Kx7" in (m.raw or "")
        for m in session.messages
        if isinstance(m, AssistantMessage)
    )

    on_disk = stored_text(journal_url, store)
    assert "tether_session_messages" in on_disk or not journal_url.startswith("sqlite")
    for core in CORES:
        assert core not in on_disk, f"{core} is stored in clear"

    reopened = Session.open("s1", open_store(journal_url))
    assert [m.kind for m in reopened.messages] == [m.kind for m in session.messages]
    login_call = next(
        c
        for m in reopened.messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
        if c.name == "login"
    )
    assert login_call.arguments == {"user": "ada", "password": REDACTED, "pin": REDACTED}
    results = {m.name: m for m in reopened.messages if isinstance(m, ToolResultMessage)}
    assert results["vault"].envelope.model_dump()["data"] == {"name": "mail", "key": REDACTED}
    assert results["login"].envelope.model_dump()["data"]["token"] == REDACTED

    follow_up = ScriptedModel(["You are still logged in."])
    again = await Agent(follow_up, TOOLS, dialect="hermes").run("Am I logged in?", session=reopened)
    assert again.output == "You are still logged in."
    seen = json.dumps([m.model_dump(mode="json") for m in follow_up.requests[0].messages])
    assert REDACTED in seen
    for core in CORES:
        assert core not in seen


async def test_a_journal_in_the_same_database_keeps_no_secret_either(journal_url: str) -> None:
    journal = SqlJournal(journal_url)
    try:
        store = SessionStore(journal.engine)
        executor = Executor(TOOLS, journal=journal)
        script = [  # secrets only where schemas mark them, and in the model's text (which the journal lacks)
            SCRIPT[0],
            f"Logging in with {API_KEY}.\n" + hermes("login", user="ada", password=PASSWORD, pin=PIN),
            "Done: you are logged in.",
        ]
        agent = Agent(ScriptedModel(script), TOOLS, dialect="hermes", executor=executor)
        await agent.run("Log me in to my mail", session=Session("s2", store))
        on_disk = stored_text(journal_url, store)
        assert "tether_journal" in on_disk or not journal_url.startswith("sqlite")
        for core in ["7d3f9a2b4c", str(PIN), "Wm4Rb8Lp2"]:  # the journal redacts by schema only: not the
            assert core not in on_disk, f"{core} is stored in clear"  # login greeting's echo of the password
    finally:
        journal.close()


async def test_a_call_stored_with_a_redacted_secret_is_refused_on_resume_not_run_with_stars(
    tmp_path: Path, open_store: OpenStore
) -> None:
    logins.clear()
    notes.clear()
    url = f"sqlite:///{tmp_path / 's.db'}"
    started = anyio.Event()

    @tool
    def slow_login(user: str, password: str) -> str:
        """Log in (slowly)."""
        logins.append(password)
        started.set()
        time.sleep(0.5)
        return "ok"

    secret_login = marked(slow_login, inputs={"password": PASSWORD_FIELD})
    call = hermes("slow_login", user="ada", password=PASSWORD) + hermes("note", text=f"pw {PASSWORD}")
    with anyio.move_on_after(10):
        async with anyio.create_task_group() as group:  # the run stops while the call runs (a crash)

            async def run() -> None:
                await Agent(ScriptedModel([call, "unreachable"]), [secret_login, note], dialect="hermes").run(
                    "Log me in", session=Session("s3", open_store(url))
                )

            group.start_soon(run)
            await started.wait()
            group.cancel_scope.cancel()
    assert logins == [PASSWORD]

    session = Session.open("s3", open_store(url))
    assert [m.kind for m in session.messages] == ["user", "assistant"]  # the call has no result yet
    model = ScriptedModel(["I could not confirm the login; please check."])
    ended: list[str] = []
    result = await Agent(model, [secret_login, note], dialect="hermes").resume(
        session, on_event=lambda e: ended.append(e.event) if e.event == "on_tool_end" else None
    )
    assert ended == ["on_tool_end", "on_tool_end"]  # a stream's reader sees both calls end
    assert logins == [PASSWORD]  # not run again with `***`
    assert all(REDACTED not in n for n in notes)  # nor the note, whose plain argument echoed the password
    answers = [m.envelope for m in session.messages if isinstance(m, ToolResultMessage)]
    assert len(answers) == 2
    for answer in answers:
        assert isinstance(answer, ErrorEnvelope)
        assert (answer.error.code, answer.error.details) == ("CONFLICT", {"redacted_at_rest": True})
    assert result.output == "I could not confirm the login; please check."
    assert session.store is not None
    assert "Zq9Kx7" not in stored_text(url, session.store)


def test_each_form_of_a_secret_is_redacted_and_a_short_one_only_as_a_whole_word() -> None:
    from tether.loop._secrets import SecretsAtRest  # the loop's own step, tested on its edge cases
    from tether.types import ToolCall, UserMessage

    spec = LOGIN.spec
    at_rest = SecretsAtRest(lambda name: spec if name == "login" else None)
    short = "x7"
    call = ToolCall(id="c1", name="login", arguments={"user": "ada", "password": short, "pin": 4821})
    raw = f"as JSON {json.dumps(short)}; pin 4821 and 48215; ax7 and x7b stay"
    (stored,) = at_rest([AssistantMessage(content=f"use {short}!", raw=raw, tool_calls=(call,))])
    assert isinstance(stored, AssistantMessage)
    assert stored.tool_calls[0].arguments == {"user": "ada", "password": REDACTED, "pin": REDACTED}
    assert stored.content == "use ***!"
    assert stored.raw == 'as JSON "***"; pin *** and 48215; ax7 and x7b stay'

    at_rest = SecretsAtRest(lambda name: spec if name == "login" else None)
    call = ToolCall(id="c2", name="login", arguments={"user": "ada", "password": PASSWORD, "pin": PIN})
    escaped, in_html = json.dumps(PASSWORD)[1:-1], html.escape(PASSWORD)
    later = UserMessage(content=f"<p>{in_html}</p> {escaped} {PASSWORD} {PIN}5")
    _, stored_later = at_rest([AssistantMessage(tool_calls=(call,)), later])
    assert stored_later == UserMessage(content="<p>***</p> *** *** ***5")  # a long one, even inside a word
    untouched = UserMessage(content="nothing secret here")
    assert SecretsAtRest(lambda _: spec)([untouched])[0] is untouched  # no secret seen: the same object


def test_a_secret_with_no_text_to_look_for_is_still_redacted_where_the_schema_puts_it() -> None:
    from tether.loop._secrets import SecretsAtRest
    from tether.types import ToolCall

    spec = LOGIN.spec.model_copy(
        update={
            "input_schema": {"type": "object", "properties": {"admin": {"type": "boolean", "x-secret": True}}}
        }
    )
    call = ToolCall(id="c1", name="login", arguments={"admin": True})
    (stored,) = SecretsAtRest(lambda _: spec)([AssistantMessage(tool_calls=(call,))])
    assert isinstance(stored, AssistantMessage)
    assert stored.tool_calls[0].arguments == {"admin": REDACTED}


async def test_text_the_session_marks_secret_reaches_the_model_but_not_the_database(
    journal_url: str, open_store: OpenStore
) -> None:
    notes.clear()
    store = open_store(journal_url)
    session = Session("s4", store, secrets={PASSWORD})  # e.g. a password the user gave for a `needs`
    model = ScriptedModel([hermes("note", text=f"password is {PASSWORD}"), "Noted."])
    prompt = f"My password is {json.dumps(PASSWORD)}; note it."
    await Agent(model, TOOLS, dialect="hermes").run(prompt, session=session)
    assert notes == [f"password is {PASSWORD}"]  # the run used it
    asked = model.requests[0].messages[-1]
    assert isinstance(asked, UserMessage)
    assert json.dumps(PASSWORD)[1:-1] in asked.content  # the model read it
    on_disk = stored_text(journal_url, store)
    assert "Zq9Kx7" not in on_disk, "the password is stored in clear"
    stored = Session.open("s4", open_store(journal_url)).messages
    assert stored[0].model_dump()["content"] == f'My password is "{REDACTED}"; note it.'
