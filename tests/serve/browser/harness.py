"""What the browser tests drive: `tether serve`'s app on a free port, serving an agent whose model follows
the script each test sets (so every run is deterministic), with tools a test can hold while the page shows
them running."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import uvicorn
import yaml

from tether.exceptions import NeedsInput, ToolError
from tether.execution import Executor, Principal
from tether.loop import Agent, EndTurn, NoCalls, Termination, core_tools
from tether.models import FunctionModel, ModelRequest
from tether.serve import AgentBuilder, ApiKey, ServeConfig, ServedAgent, create_app
from tether.store import Journal
from tether.tools import Toolset, tool

ARTIFACTS = (
    Path(os.environ.get("TETHER_TEST_ARTIFACTS") or Path(__file__).resolve().parents[3] / "test-artifacts")
    / "browser"
)
AGENT = "scripted"
END_TURN_AGENT = "scripted-end-turn"


# ------------------------------------------------------------------------------------------ the agent


class Gate:
    """Holds a tool call until the test opens it, so the page can be seen while the call runs."""

    def __init__(self) -> None:
        self._open = threading.Event()
        self._open.set()
        self.entered = threading.Event()

    def close(self) -> None:
        self._open.clear()
        self.entered.clear()

    def open(self) -> None:
        self._open.set()

    async def passed(self) -> None:
        self.entered.set()
        await anyio.to_thread.run_sync(
            self._open.wait, abandon_on_cancel=True
        )  # a cancelled run stops waiting


Turn = str | Exception | Callable[[ModelRequest], str]
"""A model turn: its text, an exception the provider raises, or a function of the request (to read it)."""


@dataclass
class Script:
    """What the model says next: each test queues its turns before it sends a message."""

    turns: deque[Turn] = field(default_factory=deque[Turn])
    gates: dict[str, Gate] = field(default_factory=lambda: {"weather": Gate(), "convert": Gate()})
    bookings: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def reply(self, request: ModelRequest) -> str:
        turn = self.turns.popleft() if self.turns else "(the script has no more turns)"
        if isinstance(turn, Exception):  # the provider fails
            raise turn
        return turn if isinstance(turn, str) else turn(request)

    def reset(self, *turns: Turn) -> None:
        self.turns = deque(turns)
        self.bookings.clear()
        for gate in self.gates.values():
            gate.open()


SCRIPT = Script()


@tool(side_effects="none")
async def weather(city: str) -> dict[str, Any]:
    """Today's weather in a city.

    Args:
        city: The city's name.
    """
    await SCRIPT.gates["weather"].passed()
    return {"city": city, "high_c": 21, "sky": "clear"}


@tool(side_effects="none")
async def convert(celsius: float) -> dict[str, float]:
    """Degrees Celsius in Fahrenheit.

    Args:
        celsius: The temperature.
    """
    await SCRIPT.gates["convert"].passed()
    return {"fahrenheit": celsius * 9 / 5 + 32}


@tool
def book(city: str, date: str | None = None) -> dict[str, str]:
    """Book a trip.

    Args:
        city: Where to.
        date: The day of travel.
    """
    if not date:
        raise NeedsInput(date="Which day do you travel?")
    SCRIPT.bookings.append({"city": city, "date": date})
    return {"booked": city, "date": date}


@tool(side_effects="none")
def read_notes(path: str) -> str:
    """Read a notes file.

    Args:
        path: The file.
    """
    raise ToolError(
        "NOT_FOUND", f"no such file: {path}", suggestion="Call list_notes to see the files that exist."
    )


@tool(side_effects="none")
def list_notes() -> list[str]:
    """The notes files there are."""
    return [f"note-{n:02}.txt" for n in range(1, 31)]


TOOLS = Toolset(weather, convert, book, read_notes, list_notes) | core_tools("say", "open_url", "send_chat")


def calls(*items: tuple[str, str, dict[str, Any], str]) -> str:
    """A model turn that calls tools in the YAML dialect (seed 001), whose calls carry a `why`."""
    block = [{"type": "tool_call", "id": i, "tool": n, "why": why, "args": a} for i, n, a, why in items]
    return "```yaml\n" + yaml.safe_dump(block, sort_keys=False) + "```"


# ----------------------------------------------------------------------------------------- the server


@dataclass
class Server:
    url: str
    script: Script


def _builder(termination: Termination) -> AgentBuilder:
    def build(principal: Principal, journal: Journal) -> Agent:
        return Agent(
            FunctionModel(SCRIPT.reply, chunk_size=3),
            dialect="yaml",
            termination=termination,
            executor=Executor(TOOLS, journal=journal),
            principal=principal,
        )

    return build


def _serve(app: Any) -> Iterator[str]:
    """Run `app` with uvicorn on a free loopback port in a thread; yields its base URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the tether server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        listener.close()


def serve(tmp: Path, keys: Sequence[ApiKey] = ()) -> Iterator[Server]:
    """The scripted agent served by `create_app` on a free port, with a SQLite database in `tmp`."""
    config = ServeConfig(
        agents=[
            ServedAgent(AGENT, _builder(NoCalls()), "follows the test's script"),
            ServedAgent(
                END_TURN_AGENT, _builder(EndTurn()), "the same, ending its turns with end_turn (seed 000)"
            ),
        ],
        database=f"sqlite:///{tmp / 'serve.db'}",
        keys=keys,
        rate_limit=None,
    )
    for url in _serve(create_app(config)):
        yield Server(url, SCRIPT)


class CuttingProxy:
    """A TCP proxy in front of the server that can cut every open connection at once, as a network that
    drops would; it keeps the request line of every request that passed, to see how the page reconnected."""

    def __init__(self, target: str):
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.requests: list[str] = []
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> int:
        """Cut every connection now; returns how many were open."""
        with self._lock:
            doomed, self._open = self._open, set()
        for s in doomed:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        return len(doomed)

    def close(self) -> None:
        self.listener.close()
        self.cut()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._open |= {client, upstream}
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, requests: bool) -> None:
        try:
            while data := source.recv(65536):
                if requests:
                    self.requests += re.findall(r"(?m)^(?:GET|POST) \S+", data.decode("latin-1"))
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open -= {source, sink}
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()
