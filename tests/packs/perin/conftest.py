"""A Perin network on SQLite and on PostgreSQL, with Dana (the user) connected to Aviad, who is busy for part
of tomorrow; "now" is Thursday 26 March 2026, 09:00 in Israel, the day before Israel's clocks go forward."""

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tether.execution import Executor, Policy, Principal, Run
from tether.packs.perin import Network, perin_pack
from tether.types import AnyEnvelope, ToolCall

ISRAEL = ZoneInfo("Asia/Jerusalem")
NOW = datetime(2026, 3, 26, 9, 0, tzinfo=ISRAEL)


def tomorrow(hour: int, minute: int = 0) -> datetime:
    """Friday 27 March 2026 in Israel, a day that begins on +02:00 and is on +03:00 from 02:00."""
    return datetime(2026, 3, 27, hour, minute, tzinfo=ISRAEL)


@dataclass
class People:
    network: Network
    dana: str
    aviad: str
    mallory: str
    """A member of the network with no connection to Dana."""

    def executor(self, **policy: Any) -> Executor:
        return Executor(perin_pack(self.network), journal=self.network.journal, policy=Policy(**policy))

    async def call(
        self,
        name: str,
        user: str | None = None,
        executor: Executor | None = None,
        call_id: str | None = None,
        **arguments: Any,
    ) -> AnyEnvelope:
        """One call as the model would make it (a new call id unless given), on behalf of `user` (Dana by
        default)."""
        run = Run(principal=Principal(id=self.dana if user is None else user), session_id="chat")
        call = ToolCall(id=call_id or f"call_{uuid.uuid4().hex[:8]}", name=name, arguments=arguments)
        return await (executor or self.executor()).execute(call, run)


@pytest.fixture
def open_network() -> Iterator[Callable[[str], Network]]:
    opened: list[Network] = []

    def open_(url: str) -> Network:
        opened.append(Network(url, clock=lambda: NOW))
        return opened[-1]

    yield open_
    for network in opened:
        network.close()


@pytest.fixture
def people(database_url: str, open_network: Callable[[str], Network]) -> People:
    network = open_network(database_url)
    dana = network.add_user("Dana Levi", "dana@example.com", "Asia/Jerusalem")
    aviad = network.add_user("Aviad Cohen", "aviad@example.com", "Asia/Jerusalem")
    mallory = network.add_user("Mallory Aviad", "mallory@example.com", "Europe/London")
    network.connect(dana, aviad)
    network.add_busy(aviad, tomorrow(12, 30), tomorrow(13, 0), "Dentist")
    return People(network, dana, aviad, mallory)
